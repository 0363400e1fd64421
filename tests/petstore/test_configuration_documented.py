"""Every environment variable the code reads is declared once (petstore.env.Section), and the
configuration reference and .env.example are what `manage.py settingsreference` writes from
those declarations: none missing, none extra, none stale."""

from __future__ import annotations

import ast
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from petstore.env import DECLARED, env_secret
from tests.processes import ROOT

ENV_READERS = {
    "env_str",
    "env_secret",
    "env_bool",
    "env_int",
    "env_float",
    "env_list",
    "env_networks",
}
# petstore.env.Section's readers, which declare what they read.
SECTION_READERS = {"flag", "integer", "number", "text", "list", "networks", "declare"}
COMPOSE_ONLY_MARK = "# --- compose.yaml only"


def _first_argument(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def _is_os_environ(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def variables_read(source: str) -> set[str]:
    """Names read through petstore.env's readers, os.environ.get/[...] and os.getenv."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            reader = (isinstance(func, ast.Name) and func.id in ENV_READERS) or (
                isinstance(func, ast.Attribute) and func.attr in SECTION_READERS
            )
            environ_get = (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and _is_os_environ(func.value)
            )
            getenv = (
                isinstance(func, ast.Attribute)
                and func.attr == "getenv"
                and isinstance(func.value, ast.Name)
                and func.value.id == "os"
            )
            name = _first_argument(node)
            if (reader or environ_get or getenv) and name and name.isupper():
                names.add(name)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _is_os_environ(node.value)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            names.add(node.slice.value)
    return names


def code_variables() -> set[str]:
    names: set[str] = set()
    for package in ("petstore", "pets", "domains"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                names |= variables_read(path.read_text())
    return names


def env_example_variables(path: Path = ROOT / ".env.example") -> tuple[set[str], set[str]]:
    """(the settings' variables, the compose-only ones), set or shown commented out."""
    settings_part, _, compose_part = path.read_text().partition(COMPOSE_ONLY_MARK)
    pattern = re.compile(r"^(?:#\s*)?([A-Z][A-Z0-9_]*)=", re.MULTILINE)
    return set(pattern.findall(settings_part)), set(pattern.findall(compose_part))


def test_the_reader_finds_every_way_of_reading_the_environment():
    source = (
        "import os\n"
        "A = env_str('A_STR')\nB = env_int('B_INT', 1)\nC = env_list('C_LIST')\n"
        "D = os.environ.get('D_GET')\nE = os.environ['E_ITEM']\nF = os.getenv('F_GETENV')\n"
        "G = env.flag('G_FLAG', False, 'doc')\nH = web.text('H_TEXT', '', 'doc')\n"
        "os.environ.setdefault('NOT_READ', 'x')\n"
    )
    assert variables_read(source) == {
        "A_STR", "B_INT", "C_LIST", "D_GET", "E_ITEM", "F_GETENV", "G_FLAG", "H_TEXT"
    }  # fmt: skip


def test_every_variable_read_is_declared_once_and_every_declaration_is_read():
    declared = set(DECLARED)
    assert code_variables() - declared == set(), "read by the code, declared nowhere"
    assert declared - code_variables() == set(), "declared, read by no code"
    assert {"NUM_PROXIES", "CSRF_TRUSTED_ORIGINS", "API_RATE_LIMIT", "WEB_BIND"} <= declared


def test_the_reference_and_env_example_are_what_the_declarations_write():
    # `manage.py settingsreference` writes them again after a change to a declaration.
    call_command("settingsreference", "--check")
    reference = (ROOT / "docs" / "configuration.md").read_text()
    for setting in DECLARED.values():
        assert f"| `{setting.name}` |" in reference


def test_a_stale_reference_is_refused_with_the_command_that_writes_it(tmp_path, settings):
    settings.BASE_DIR = tmp_path
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "configuration.md").write_text("old")
    with pytest.raises(CommandError, match=r"configuration.md, .env.example differ .* run"):
        call_command("settingsreference", "--check")
    call_command("settingsreference", stdout=StringIO())
    call_command("settingsreference", "--check")


def test_env_example_lists_every_variable_read_and_nothing_else():
    listed, compose_only = env_example_variables()
    read = code_variables()
    assert read - listed == set(), "read by the code, missing from .env.example"
    assert listed - read == set(), "in .env.example, read by no code"
    assert compose_only.isdisjoint(read)
    compose = (ROOT / "compose.yaml").read_text()
    for name in compose_only:
        assert f"${{{name}" in compose, f"{name} is compose-only but compose.yaml never uses it"


def test_a_secret_is_read_from_the_file_its_file_variable_names(tmp_path, monkeypatch):
    (tmp_path / "key").write_text("from-a-file\n")
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.setenv("X_SECRET_FILE", str(tmp_path / "key"))
    assert env_secret("X_SECRET") == "from-a-file"
    monkeypatch.setenv("X_SECRET", "from-the-environment")
    with pytest.raises(ImproperlyConfigured, match="X_SECRET and X_SECRET_FILE are both set"):
        env_secret("X_SECRET")
    monkeypatch.delenv("X_SECRET")
    monkeypatch.setenv("X_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match=r"^X_SECRET_FILE=.*missing: No such file"):
        env_secret("X_SECRET")


def test_every_secret_setting_takes_a_file_variable():
    secrets = {setting.name for setting in DECLARED.values() if setting.secret}
    assert {"SECRET_KEY", "DATABASE_URL", "DOMAINS_KEY_ENCRYPTION_KEY", "EMAIL_URL"} <= secrets
    reference = (ROOT / "docs" / "configuration.md").read_text()
    for name in secrets:
        assert f"`{name}_FILE`" in reference
