"""The hashed locks `make` installs from hold exactly what pyproject.toml pins: a
dependency added without `make lock` would install nowhere."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETS = ["run", "test", "lint", "bench"]


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
