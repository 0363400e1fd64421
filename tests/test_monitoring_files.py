"""deploy/prometheus-alerts.yml and deploy/grafana-dashboard.json: they parse, every metric
they name is a family GET /metrics really serves, and the rules pass promtool's own check
and the unit tests of deploy/prometheus-alerts.test.yml (each alert firing and not)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from domains.choices import TEMPORARY_CHECK_CODES
from tests.needs import promtool_missing, require
from tests.petstore.metrics.scrape import TOKEN, Scrape
from tests.processes import ROOT

METRIC_NAME = re.compile(r"\bpetstore_[a-z0-9_]+")
SAMPLE_SUFFIXES = ("_bucket", "_count", "_sum")
DEPLOY = ROOT / "deploy"
# One rule each.
ALERTS = {
    "PetstoreCertificatesExpiringSoon",
    "PetstoreCertificatesExpiringWithoutRenewal",
    "PetstoreRenewalsFailing",
    "PetstoreAcmeRateLimited",
    "PetstoreSweepStalled",
    "PetstoreMetricsUnavailable",
    "PetstoreChecksFailingPlatformWide",
    "PetstoreQueueBacklog",
    "PetstoreAcmeErrors",
    "PetstoreHighServerErrorRate",
}
# The one alert on Prometheus's own series, not a family of ours: the scrape itself.
ABOUT_THE_SCRAPE = {"PetstoreMetricsUnavailable"}


def _alerts() -> dict[str, dict]:
    rules = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())
    return {rule["alert"]: rule for group in rules["groups"] for rule in group["rules"]}


@pytest.fixture
def served(client, settings, db) -> set[str]:
    """The sample names a scrape can hold: each family's name and its samples' names."""
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics", HTTP_HOST="10.0.0.7", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    families = Scrape(response.content.decode()).families.values()
    names = set()
    for family in families:
        names.add(family.name)
        if family.type == "counter":
            names.add(family.name + "_total")
        if family.type == "histogram":
            names.update(family.name + suffix for suffix in SAMPLE_SUFFIXES)
    return names


def _balanced(expr: str) -> bool:
    depth = {"(": 0, "{": 0, "[": 0}
    closing = {")": "(", "}": "{", "]": "["}
    for char in expr:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] -= 1
            if depth[closing[char]] < 0:
                return False
    return not any(depth.values())


def test_the_alert_rules_parse_and_name_only_served_families(served):
    alerts = _alerts()
    assert set(alerts) == ALERTS
    for rule in alerts.values():
        names = set(METRIC_NAME.findall(rule["expr"]))
        if rule["alert"] in ABOUT_THE_SCRAPE:
            assert 'up{job="petstore"}' in rule["expr"]
        else:
            assert names, rule["alert"]
        assert names <= served, (rule["alert"], names - served)
        assert _balanced(rule["expr"]), rule["alert"]
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])


def test_checks_failing_platform_wide_counts_the_platforms_codes_only():
    expr = _alerts()["PetstoreChecksFailingPlatformWide"]["expr"]
    [codes] = re.findall(r'code=~"([^"]+)"', expr)
    assert set(codes.split("|")) == set(TEMPORARY_CHECK_CODES)


def test_promtool_checks_the_rules_and_each_alert_fires_and_stays_quiet_as_tested():
    require(promtool_missing, what="the alert rules' unit tests")
    for args in (
        ["check", "rules", "prometheus-alerts.yml"],
        ["test", "rules", "prometheus-alerts.test.yml"],
    ):
        run = subprocess.run(
            ["promtool", *args], cwd=DEPLOY, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stdout + run.stderr
    # Every alert has a test of its own, firing and not.
    tests = yaml.safe_load((DEPLOY / "prometheus-alerts.test.yml").read_text())["tests"]
    cases = [case for test in tests for case in test["alert_rule_test"]]
    for alert in ALERTS:
        outcomes = {bool(case["exp_alerts"]) for case in cases if case["alertname"] == alert}
        assert outcomes == {True, False}, alert


def test_the_dashboard_shows_every_family_and_names_only_served_ones(served):
    dashboard = json.loads((ROOT / "deploy" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    named = {name for expr in exprs for name in METRIC_NAME.findall(expr)}
    assert named <= served, named - served
    assert all(_balanced(expr) for expr in exprs)
    # Every family has a panel (the enqueue failures are a detail of the task failures).
    families = {name for name in served if name == _family(name)}
    assert families - {"petstore_task_enqueue_failures"} <= {_family(name) for name in named}


def _family(name: str) -> str:
    for suffix in ("_total", *SAMPLE_SUFFIXES):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name
