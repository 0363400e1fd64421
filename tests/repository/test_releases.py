"""Releases have a number (docs/decisions/releases.md): `version` in pyproject.toml is the
newest release in CHANGELOG.md, and every compatibility shim carries a marker naming the
release that drops it, so the release that reaches that number cannot ship with it."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from devtools.previous_release import Release, changelog_releases, git, release_commit
from tests.processes import ROOT

# Written in two parts so that this file holds no marker of its own.
PHRASE = "Compatibility" + " shim"
MARKER = re.compile(re.escape(PHRASE) + r" \(drop in (?P<release>[^)\n]*)\):(?P<reason>[^\n]*)")
RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
# Where code (and its comments) lives; docs describe the marker without being one.
CODE = (".ci", "bench", "deploy", "devtools", "domains", "pets", "petstore", "templates", "tests")
TOP_FILES = ("Dockerfile", "Makefile", "Procfile.production", "compose.yaml", "pyproject.toml")


@dataclass(frozen=True)
class Marker:
    where: str
    release: str
    reason: str

    @property
    def number(self) -> tuple[int, int, int] | None:
        found = RELEASE.fullmatch(self.release)
        return None if found is None else (int(found[1]), int(found[2]), int(found[3]))

    @property
    def problem(self) -> str | None:
        if self.number is None:
            return f"{self.where}: {self.release!r} is not a release number (X.Y.Z)"
        if not self.reason.strip():
            return f"{self.where}: the marker gives no reason"
        return None


def number(release: str) -> tuple[int, int, int]:
    found = RELEASE.fullmatch(release)
    assert found is not None, f"{release!r} is not a release number (X.Y.Z)"
    return int(found[1]), int(found[2]), int(found[3])


def markers_in(text: str, where: str) -> Iterator[Marker | str]:
    """Each marker in `text`, or a line naming the phrase without a marker's shape."""
    for line_number, line in enumerate(text.splitlines(), start=1):
        if PHRASE not in line:
            continue
        found = MARKER.search(line)
        if found is None:
            yield f"{where}:{line_number}: {PHRASE!r} without '(drop in X.Y.Z): reason'"
        else:
            yield Marker(f"{where}:{line_number}", found["release"].strip(), found["reason"])


def code_files() -> Iterator[Path]:
    for name in TOP_FILES:
        yield ROOT / name
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path


def all_markers() -> list[Marker | str]:
    found: list[Marker | str] = []
    for path in code_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text (an image, a compiled file)
        found.extend(markers_in(text, str(path.relative_to(ROOT))))
    return found


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def releases() -> list[Release]:
    return changelog_releases((ROOT / "CHANGELOG.md").read_text())


def test_the_marker_rule_reads_release_and_reason_and_flags_a_malformed_one():
    text = (
        f"# {PHRASE} (drop in 1.2.0): 1.0.0's ORM selects the column.\n"
        f"x = 1  # {PHRASE} (drop in next release): whatever\n"
        f"# {PHRASE}, without a release\n"
    )
    good, wrong, bare = markers_in(text, "f.py")
    assert isinstance(good, Marker) and good.number == (1, 2, 0) and good.problem is None
    assert isinstance(wrong, Marker) and wrong.problem is not None
    assert isinstance(bare, str) and bare.startswith("f.py:3:")


def test_every_marker_names_a_release_and_a_reason_and_there_is_one_at_least():
    found = all_markers()
    problems = [item if isinstance(item, str) else item.problem for item in found]
    assert [problem for problem in problems if problem] == []
    assert any(isinstance(item, Marker) for item in found), "no marker parsed: the rule broke?"


def test_no_compatibility_shim_outlives_the_release_that_drops_it():
    current = number(version())
    due = [
        f"{item.where}: marked for {item.release}, and the version is {version()}: drop it"
        for item in all_markers()
        if isinstance(item, Marker) and item.number is not None and item.number <= current
    ]
    assert due == []


def test_the_changelog_names_this_release_newest_first():
    found = releases()
    assert found, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' heading"
    assert all(release.date is not None for release in found), "a release without its date"
    numbers = [number(release.number) for release in found]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)
    assert found[0].number == version()


def test_each_release_before_names_its_commit_which_set_its_version():
    """The way back (devtools/previous_release.py) finds a release by the commit its heading
    names, in a clone without tags; a wrong or missing commit would run other code."""
    text = (ROOT / "CHANGELOG.md").read_text()
    named = [release for release in releases() if release.commit is not None]
    # Only the newest release, while it is this commit's, may wait for its commit.
    assert [release.number for release in releases() if release.commit is None] in (
        [],
        [version()] if "## [Unreleased]" not in text else [],
    )
    for release in named:
        commit = release_commit(release)
        pyproject = tomllib.loads(git("show", f"{commit}:pyproject.toml"))
        assert pyproject["project"]["version"] == release.number, release


def test_a_heading_reads_with_and_without_its_commit():
    text = (
        "## [Unreleased]\n## [1.1.0] - 2026-12-06 (commit 096a595db33c)\n## [1.0.0] - 2026-11-28\n"
    )
    assert changelog_releases(text) == [
        Release("1.1.0", "2026-12-06", "096a595db33c"),
        Release("1.0.0", "2026-11-28", None),
    ]


def test_the_chart_and_the_kubernetes_steps_name_this_release():
    """The chart's appVersion and default image tag, and the install steps' image, are the
    release the version names: an install follows them to the image of this code."""
    chart = (ROOT / "deploy/helm/petstore/Chart.yaml").read_text()
    values = (ROOT / "deploy/helm/petstore/values.yaml").read_text()
    steps = (ROOT / "docs/operators/kubernetes.md").read_text()
    named = (
        re.findall(r'^appVersion: "([^"]+)"', chart, re.M)
        + re.findall(r'^  tag: "([^"]+)"', values, re.M)
        + re.findall(r"petstore:(\d+\.\d+\.\d+)", steps)
        + re.findall(r'tag: "(\d+\.\d+\.\d+)"', steps)
    )
    assert len(named) >= 4, named
    assert set(named) == {version()}
