"""The shape of the code: no import cycles among our modules, the modules every layer reads
importing (almost) nothing, no module past 400 lines, and the apps' APIs on the platform.

The layers themselves (which package may import which, directly or through other modules)
are import-linter's contracts in pyproject.toml's [tool.importlinter], checked by
`make lint` and pre-commit; docs/architecture.md draws them.

Every `import` and `from ... import` statement counts, wherever it is written:
at the top, inside a function, or under `if TYPE_CHECKING:`. The source is read
with `ast`, never imported, so a cycle cannot hide behind import order.

Choices import nothing of ours, and the policy (domains/policy.py) only the settings and
the choices: every layer reads them, so they read no layer.

The apps' APIs sit on the platform: every API view of an app derives from its base view
(petstore.api.views.BaseAPIView), and no app builds a /v1 URL by hand (`Location` comes from
`reverse()`). This rule imports the API modules, to ask each class what it derives from.

And no module of ours grows past 400 lines, the tests' and the benchmarks' included:
past that it holds several subjects. The migrations (generated) are the exception.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
from rest_framework.views import APIView

from petstore.api.views import BaseAPIView
from tests.processes import ROOT

PACKAGES = ("petstore", "pets", "domains", "devtools")


def module_files() -> dict[str, Path]:
    """Our modules by dotted name: `domains/services/__init__.py` is `domains.services`."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every module named by an import statement anywhere in the file, relative ones resolved."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                # `from . import x` in a package's __init__ is relative to the package itself.
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                # `from pkg import name` imports the submodule pkg.name when there is one.
                yield submodule if submodule in MODULES else base


def import_graph() -> dict[str, set[str]]:
    """For each of our modules, the modules of ours it imports (the nearest one we own)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = set()
        for name in imported_names(module, path):
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return graph


GRAPH = import_graph()


def within(module: str, *prefixes: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def test_the_graph_sees_imports_of_every_kind():
    # A statement at the top, relative or absolute, and one inside a function all count:
    # without them the rules below would pass on an empty graph.
    assert "domains.services.scheduling" in GRAPH["domains.tasks"]
    assert len(GRAPH) > 50
    assert sum(len(edges) for edges in GRAPH.values()) > 100


def test_there_is_no_import_cycle():
    try:
        order = list(graphlib.TopologicalSorter(GRAPH).static_order())
    except graphlib.CycleError as error:
        cycle = error.args[1]
        pytest.fail("import cycle (-> means imports): " + " -> ".join(reversed(cycle)))
    assert set(order) == set(GRAPH)


# The modules every layer reads, and what they may import themselves (every import
# statement, ours or not): choices are enumerations and import nothing of ours; the policy
# (quotas, windows, leases, backoffs) reads the settings, when called, and the choices it
# is about, and no model or service.
def imports_of(module: str) -> set[str]:
    return set(imported_names(module, MODULES[module]))


def test_the_choices_import_nothing_of_ours():
    assert GRAPH["domains.choices"] == set()
    # Enumerations only: no durations (they are policy's), no settings; their labels are
    # marked for translation.
    assert imports_of("domains.choices") == {"__future__", "django.db", "django.utils.translation"}


def test_the_policy_imports_only_the_settings_and_the_choices():
    assert GRAPH["domains.policy"] == {"domains.choices"}
    assert imports_of("domains.policy") == {
        "__future__",
        "datetime",
        "django.conf",
        "domains.choices",
        "random",  # the jitter of a backoff: how long to wait is policy, spread out
    }


# Every Python module of ours, the tests' and the benchmarks' included, is at most this long.
MOST_LINES = 400
LINE_LIMITED = (*PACKAGES, "tests", "bench")


def is_line_limited(path: Path) -> bool:
    """All but the migrations (generated)."""
    relative = path.relative_to(ROOT)
    return "migrations" not in relative.parts


def module_lengths() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for package in LINE_LIMITED
        for path in sorted((ROOT / package).rglob("*.py"))
        if is_line_limited(path)
    }


def test_no_module_of_ours_is_longer_than_400_lines():
    lengths = module_lengths()
    # The walk reaches every package, and leaves out what is meant to be long.
    reached = {"tests/repository/test_architecture.py", "bench/run.py", "petstore/settings/core.py"}
    assert reached <= lengths.keys()
    assert not any("/migrations/" in name for name in lengths)
    too_long = [f"{name}: {lines}" for name, lines in lengths.items() if lines > MOST_LINES]
    assert not too_long, "\n".join([f"over {MOST_LINES} lines, to split by subject:", *too_long])


APP_APIS = ("pets.api", "domains.api")


def app_api_modules() -> list[str]:
    return [module for module in MODULES if within(module, *APP_APIS)]


def views_not_on_the_base_view(module: str) -> list[str]:
    loaded = importlib.import_module(module)
    return [
        name
        for name, cls in inspect.getmembers(loaded, inspect.isclass)
        if cls.__module__ == module
        and issubclass(cls, APIView)
        and not issubclass(cls, BaseAPIView)
    ]


def test_every_api_view_of_an_app_derives_from_the_platforms_base_view():
    found = {module: views_not_on_the_base_view(module) for module in app_api_modules()}
    assert {"pets.api.views", "domains.api.views", "domains.api.webhooks"} <= found.keys()
    stray = {module: views for module, views in found.items() if views}
    assert not stray, f"API views not derived from petstore.api.views.BaseAPIView: {stray}"


def hand_built_v1_urls(source: str) -> list[int]:
    """Lines of f-strings that start a /v1 path (`f"/v1/pets/{pk}"`)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.JoinedStr)
        and node.values
        and isinstance(first := node.values[0], ast.Constant)
        and str(first.value).startswith("/v1/")
    ]


def test_no_app_builds_a_v1_url_by_hand():
    """`Location` and every other link to an operation come from reverse() (the base view's
    `created`), so a route renamed or moved cannot leave a stale URL behind."""
    built = {
        module: lines
        for module in app_api_modules()
        if (lines := hand_built_v1_urls(MODULES[module].read_text()))
    }
    assert not built, f"/v1 URLs built by hand (use reverse()): {built}"
    assert hand_built_v1_urls('x = 1\nlocation = f"/v1/pets/{pk}"') == [2]  # it sees them
