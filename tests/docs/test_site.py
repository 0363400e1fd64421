"""The README stays one screen that starts with the two commands, and the decision records
stay records: numbered, dated, with a status, listed in their index, superseded both ways.

`make docs` (mkdocs build --strict) checks the site's links, anchors and nav; this checks what
mkdocs cannot."""

from __future__ import annotations

import re

from tests.processes import ROOT

ADR = ROOT / "docs" / "adr"
RECORD = re.compile(r"^(\d{4})-[a-z0-9-]+\.md$")
STATUS = re.compile(r"^- Status: (Proposed|Accepted|Superseded by \[(\d{4})\]\((\S+)\))$", re.M)


def test_the_readme_is_one_screen_that_starts_with_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 10 * 1024
    first_screen = readme.splitlines()[:24]
    assert any(line.startswith("make run ") for line in first_screen)
    assert any(line.startswith("make test ") for line in first_screen)


def records() -> dict[str, str]:
    return {
        path.name: path.read_text()
        for path in sorted(ADR.glob("*.md"))
        if RECORD.match(path.name) and path.name != "0000-template.md"
    }


def test_each_record_has_its_number_a_status_a_date_and_a_line_in_the_index():
    index = (ADR / "index.md").read_text()
    assert records()
    for name, text in records().items():
        assert text.startswith(f"# {name[:4]}. "), name
        assert STATUS.search(text), f"{name}: no '- Status:' line of the known kinds"
        assert re.search(r"^- Date: \d{4}-\d{2}-\d{2}$", text, re.M), f"{name}: no '- Date:'"
        assert f"]({name})" in index, f"{name} is not listed in docs/adr/index.md"


def test_a_superseded_record_names_its_successor_which_names_it_back():
    found = records()
    superseded = 0
    for name, text in found.items():
        status = STATUS.search(text)
        if status and status[2]:
            superseded += 1
            successor = status[3]
            assert successor in found, f"{name} is superseded by {successor}, which is no record"
            assert successor.startswith(status[2] + "-"), name
            assert re.search(
                rf"^- Supersedes: \[\d{{4}}\]\({re.escape(name)}\)$", found[successor], re.M
            ), f"{successor} does not say it supersedes {name}"
    assert superseded, "the kept pages' record is superseded"
