"""deploy/prometheus-alerts.yml and deploy/grafana-dashboard.json: they parse, and every
metric they name is a family GET /metrics really serves (promtool is not here: the YAML
is read and the names checked)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.petstore.metrics.scrape import TOKEN, Scrape
from tests.processes import ROOT

METRIC_NAME = re.compile(r"\bpetstore_[a-z0-9_]+")
SAMPLE_SUFFIXES = ("_bucket", "_count", "_sum")
# The five the issue names, one rule each.
ALERTS = {
    "PetstoreCertificatesExpiringWithoutRenewal",
    "PetstoreChecksFailingPlatformWide",
    "PetstoreQueueBacklog",
    "PetstoreAcmeErrors",
    "PetstoreHighServerErrorRate",
}


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
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus-alerts.yml").read_text())
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert {rule["alert"] for rule in alerts} == ALERTS
    for rule in alerts:
        names = set(METRIC_NAME.findall(rule["expr"]))
        assert names, rule["alert"]
        assert names <= served, (rule["alert"], names - served)
        assert _balanced(rule["expr"]), rule["alert"]
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])


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
