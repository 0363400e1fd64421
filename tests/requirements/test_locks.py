"""The hashed locks `make` installs from hold exactly what pyproject.toml pins: a
dependency added without `make lock` would install nowhere."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from tests.processes import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The install sets `make` installs and `make lock` writes, as the Makefile lists them.
(_sets,) = re.findall(r"^SETS\s*:=(.*)$", (ROOT / "Makefile").read_text(), re.M)
SETS = _sets.split()


def test_the_makefile_locks_every_extra_of_pyproject_but_dev():
    assert set(SETS) == set(PYPROJECT["project"]["optional-dependencies"]) - {"dev"}
    assert PYPROJECT["project"]["optional-dependencies"]["dev"] == [f"petstore[{','.join(SETS)}]"]


def _pins(requirements: list[str]) -> set[str]:
    """`name==version`, the name normalised as pip does (extras dropped)."""
    pins = set()
    for line in requirements:
        name, _, version = line.partition("==")
        name = re.sub(r"\[.*\]", "", name)
        pins.add(f"{re.sub(r'[-_.]+', '-', name).lower()}=={version.strip()}")
    return pins


def _locked(lock: str) -> set[str]:
    text = (ROOT / "requirements" / f"{lock}.txt").read_text()
    return {
        f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"
        for name, version in re.findall(
            r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", text, re.M
        )
    }


@pytest.mark.parametrize("install_set", SETS)
def test_each_lock_pins_the_runtime_and_its_extra_as_pyproject_does(install_set):
    wanted = _pins(PYPROJECT["project"]["dependencies"])
    wanted |= _pins(PYPROJECT["project"]["optional-dependencies"][install_set])
    missing = wanted - _locked(install_set)
    assert not missing, f"requirements/{install_set}.txt lacks {sorted(missing)}: run `make lock`"


def test_the_production_lock_holds_the_runtime_dependencies_alone_with_hashes():
    production = _locked("production")
    assert _pins(PYPROJECT["project"]["dependencies"]) <= production, "run `make lock`"
    # Everything it holds the run set holds too, at the same version: nothing of an extra.
    assert production <= _locked("run")
    # The extras' tools stay out (requests or PyYAML may be there: runtime packages need them).
    names = {pin.partition("==")[0] for pin in production}
    assert not names & {"honcho", "pytest", "ruff", "mypy", "gunicorn", "playwright", "psutil"}
    text = (ROOT / "requirements" / "production.txt").read_text()
    requirements = re.findall(r"^[A-Za-z0-9].*$", text, re.M)
    assert len(requirements) == len(production)
    assert all(line.endswith("\\") for line in requirements)  # each followed by its hashes


def test_make_lock_writes_the_production_lock_and_renovate_updates_every_lock():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nlock:\n", 1)[1].split("\n\n", 1)[0]
    assert "-o requirements/production.txt pyproject.toml" in recipe
    assert "--extra" not in recipe.split("production.txt")[0].splitlines()[-1]
    renovate = json.loads((ROOT / "renovate.json").read_text())
    assert {"pep621", "pip-compile"} <= set(renovate["enabledManagers"])
    (pattern,) = renovate["pip-compile"]["managerFilePatterns"]
    locks = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "requirements").glob("*.txt"))
    assert "requirements/production.txt" in locks
    assert all(re.search(pattern.strip("/"), lock) for lock in locks)
    # Renovate compiles with the uv `make lock` uses.
    (uv,) = re.findall(r"^UV\s*:= uv==(\S+)", makefile, re.M)
    assert renovate["constraints"]["uv"] == f"=={uv}"


def test_the_build_lock_pins_pyprojects_build_backend_with_hashes():
    """Production builds the project without build isolation (docs/operators/production.md,
    the Dockerfile), with the backend of requirements/build.txt: pyproject's [build-system]
    requires, hashed."""
    source = (ROOT / "requirements" / "build.in").read_text().splitlines()
    wanted = [line for line in source if line.strip() and not line.startswith("#")]
    assert wanted == PYPROJECT["build-system"]["requires"], "keep build.in in step"
    build = _locked("build")
    assert {pin.partition("==")[0] for pin in build} == {"setuptools"}
    assert build <= _locked("dev"), "run `make lock`"  # the version the tests ran on
    text = (ROOT / "requirements" / "build.txt").read_text()
    assert all(line.endswith("\\") for line in re.findall(r"^[A-Za-z0-9].*$", text, re.M))
    recipe = (ROOT / "Makefile").read_text().split("\nlock:\n", 1)[1].split("\n\n", 1)[0]
    assert "-o requirements/build.txt requirements/build.in" in recipe
