"""docs/decisions/access.md's matrix is the one domains/access.py writes."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from domains import access
from domains.accessreference import BEGIN, END, matrix, rewritten


def test_the_committed_page_holds_todays_matrix():
    call_command("accessreference", "--check")


def test_a_change_to_the_table_changes_the_page(monkeypatch):
    page = (settings.BASE_DIR / "docs/decisions/access.md").read_text()
    monkeypatch.setitem(
        access.ROLE_PERMISSIONS, "viewer", access.ROLE_PERMISSIONS["viewer"] | {"domains.remove"}
    )
    assert rewritten(page) != page
    assert "| Remove a domain (`domains.remove`) | ✓ | " in matrix()


def test_a_page_without_the_block_is_refused_in_one_line(tmp_path, settings):
    (tmp_path / "docs/decisions").mkdir(parents=True)
    (tmp_path / "docs/decisions/access.md").write_text("# Access\n")
    settings.BASE_DIR = tmp_path
    with pytest.raises(CommandError, match="No access matrix block"):
        call_command("accessreference")
    assert BEGIN in matrix() and END in matrix()
