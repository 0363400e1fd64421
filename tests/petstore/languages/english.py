"""What "an English sentence left" means for the tests of the second language: the visible
text of a page or a mail (tags, scripts and styles left out; titles, labels and placeholders
in), and the English catalogue's sentences, cut at their placeholders and tags into the runs
of words a reader sees."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from babel.messages.pofile import read_po

from devtools.translations import catalogues

# Attributes a reader sees or hears (a tooltip, a screen reader's label, a field's hint).
SHOWN_ATTRIBUTES = frozenset({"title", "aria-label", "placeholder", "alt"})
_PLACEHOLDER_OR_TAG = re.compile(r"%\([a-z_]+\)[sd]|\{[a-z_]+\}|<[^>]+>|&[a-z]+;")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "style"}:
            self._hidden += 1
        self.parts.extend(value for name, value in attrs if name in SHOWN_ATTRIBUTES and value)

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"}:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def english_runs(language: str) -> dict[str, str]:
    """Each run of at least two words of the English catalogue's sentences (msgids) that
    its translation into `language` does not keep as it is (a name such as "Standard
    Webhooks" stays), with the msgid it comes from."""
    [po] = [path for path in catalogues() if path.parent.parent.name == language]
    with po.open("rb") as source:
        catalogue = read_po(source)
    runs: dict[str, str] = {}
    for message in catalogue:
        if not message.id:
            continue
        ids = [str(i) for i in message.id] if isinstance(message.id, tuple) else [message.id]
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        kept = " ".join(str(s) for s in strings)
        for msgid in ids:
            for piece in _PLACEHOLDER_OR_TAG.split(str(msgid)):
                run = " ".join(piece.split()).strip(" .,:;()")
                if len(run.split()) >= 2 and run not in kept:
                    runs[run] = str(msgid)
    return runs


def english_left(text: str, runs: dict[str, str]) -> list[str]:
    """The catalogue's English sentences still in `text`, each with the run found."""
    text = " ".join(text.split())
    return [f"{run!r} (of {msgid!r})" for run, msgid in runs.items() if run in text]
