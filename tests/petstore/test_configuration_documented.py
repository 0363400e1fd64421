"""Every environment variable the code reads is in the configuration reference's table
(docs/configuration.md) and in .env.example, and neither lists one the code does not read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.processes import ROOT

ENV_READERS = {"env_str", "env_bool", "env_int", "env_float", "env_list", "env_networks"}
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
            reader = isinstance(func, ast.Name) and func.id in ENV_READERS
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
            if (reader or environ_get or getenv) and (name := _first_argument(node)):
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


def reference_table_variables() -> set[str]:
    page = (ROOT / "docs" / "configuration.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    names: set[str] = set()
    for row in rows:
        first_cell = row.split("|")[1]
        names |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", first_cell))
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
        "os.environ.setdefault('NOT_READ', 'x')\n"
    )
    assert variables_read(source) == {"A_STR", "B_INT", "C_LIST", "D_GET", "E_ITEM", "F_GETENV"}


def test_the_settings_read_the_variables_the_issue_found_missing():
    assert {"NUM_PROXIES", "CSRF_TRUSTED_ORIGINS", "API_RATE_LIMIT", "SIGNIN_MAX_ATTEMPTS"} <= (
        code_variables()
    )


def test_every_variable_read_is_in_the_reference_table_and_nothing_else():
    read, documented = code_variables(), reference_table_variables()
    assert read - documented == set(), "read by the code, missing from docs/configuration.md"
    assert documented - read == set(), "in docs/configuration.md, read by no code"


def test_env_example_lists_every_variable_read_and_nothing_else():
    listed, compose_only = env_example_variables()
    read = code_variables()
    assert read - listed == set(), "read by the code, missing from .env.example"
    assert listed - read == set(), "in .env.example, read by no code"
    assert compose_only.isdisjoint(read)
    compose = (ROOT / "compose.yaml").read_text()
    for name in compose_only:
        assert f"${{{name}" in compose, f"{name} is compose-only but compose.yaml never uses it"
