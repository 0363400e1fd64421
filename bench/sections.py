"""A section of bench/results.md that one benchmark writes, and that a run which does not
measure it keeps as it stands. A section not yet in the file goes before the first of the
sections named to follow it (else at the end)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.md"


def _split(title: str, followed_by: tuple[str, ...]) -> tuple[str, str, str]:
    """The file before the section, the section, and what follows it."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    start = text.find("\n" + title + "\n")
    if start < 0:
        found = (text.find("\n" + later + "\n") for later in followed_by)
        at = min((i for i in found if i >= 0), default=len(text))
        return text[:at], "", text[at:]
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end
    return text[:start], text[start + 1 : end + 1], text[end:]


def kept(title: str, followed_by: tuple[str, ...]) -> list[str]:
    """The section's lines as they stand ([] when the file has none)."""
    section = _split(title, followed_by)[1]
    return section.rstrip("\n").splitlines() + [""] if section else []


def write(title: str, followed_by: tuple[str, ...], lines: list[str]) -> None:
    """Replace the section with `lines`, keeping the rest of the file."""
    before, _, after = _split(title, followed_by)
    text = before.rstrip("\n") + "\n\n" + "\n".join(lines).rstrip("\n") + "\n"
    RESULTS.write_text(text + ("\n" + after.lstrip("\n") if after else ""))
