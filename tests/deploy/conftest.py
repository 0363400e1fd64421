"""A failed test of the systemd drill (tests/deploy/test_systemd_boot.py) says what the units
were doing: their states and journal go into its report, so CI's log explains the failure."""

from __future__ import annotations

import pytest

from tests.deploy.systemd_drill import Machine


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    machine = getattr(item, "funcargs", {}).get("machine")
    if report.failed and isinstance(machine, Machine):
        report.sections.append(("the drill's units and journal", machine.report()))
    return report
