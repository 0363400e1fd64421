"""Management commands: revokeapikey (createapikey, which limits a key to a project, is
domains' own: tests/domains/test_createapikey.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def test_revokeapikey_revokes_by_the_prefix_the_admin_shows(api, alice_key):
    assert api.get("/v1/pets").status_code == 200  # the key is now cached
    lines = run("revokeapikey", alice_key.api_key.display_prefix)
    assert lines == [f"Revoked API key {alice_key.api_key.display_prefix} of alice."]
    assert api.get("/v1/pets").status_code == 401
    with pytest.raises(CommandError, match="already revoked"):
        run("revokeapikey", alice_key.api_key.prefix)


@pytest.mark.django_db
def test_revokeapikey_refuses_an_unknown_prefix():
    with pytest.raises(CommandError, match="No API key"):
        run("revokeapikey", "pst_00000000")
