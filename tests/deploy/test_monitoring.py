"""deploy/prometheus-alerts.yml, deploy/blackbox.yml and deploy/grafana-dashboard.json: they
parse, every metric of ours they name is a family GET /metrics really serves and every other
one a standard exporter's, every rule keeps the labels an operator routes by, the rules pass
promtool's own check and the unit tests of deploy/prometheus-alerts.test.yml (each alert
firing and not), and the operators' alerts page has a line for each alert."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from domains.choices import TEMPORARY_CHECK_CODES
from petstore.metrics.http import DURATION_BUCKETS, UNROUTED
from tests.needs import (
    BLACKBOX_EXPORTER,
    blackbox_exporter_missing,
    promtool_missing,
    require,
)
from tests.petstore.metrics.scrape import TOKEN, Scrape
from tests.processes import ROOT

METRIC_NAME = re.compile(r"\bpetstore_[a-z0-9_]+")
# A name in an expression once strings, label matchers, ranges and label lists are gone: a
# series, unless a function or an aggregation (followed by `(`), a keyword or a number.
NAME = re.compile(r"(?<![\w:.])([a-zA-Z_:][\w:]*)\b(?!\s*\()")
PROMQL_WORDS = {"and", "or", "unless", "offset", "bool", "inf", "nan"}
LABEL_LISTS = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
SAMPLE_SUFFIXES = ("_bucket", "_count", "_sum")
DEPLOY = ROOT / "deploy"
ALERTS_PAGE = ROOT / "docs" / "operators" / "alerts.md"
# One rule each.
ALERTS = {
    "PetstoreAvailabilityBudgetBurnFast",
    "PetstoreAvailabilityBudgetBurnSlow",
    "PetstoreLatencyBudgetBurnFast",
    "PetstoreLatencyBudgetBurnSlow",
    "PetstoreCertificatesExpiringSoon",
    "PetstoreCertificatesExpiringWithoutRenewal",
    "PetstoreRenewalsFailing",
    "PetstoreAcmeRateLimited",
    "PetstoreAcmeFallbackCarrying",
    "PetstoreSweepStalled",
    "PetstoreBackupStale",
    "PetstoreTargetDown",
    "PetstoreJobDown",
    "PetstoreMetricsUnavailable",
    "PetstoreChecksFailingPlatformWide",
    "PetstoreQueueBacklog",
    "PetstoreQueueNotDraining",
    "PetstoreAcmeErrors",
    "PetstoreWebhookDeliveriesFailing",
    "PetstoreEmailDeliveriesFailing",
    "PetstoreRedisDown",
    "PetstorePostgresDown",
    "PetstorePostgresDiskLow",
    "PetstorePostgresDiskFull",
    "PetstoreEdgeDown",
    "PetstoreServedCertificateExpiringSoon",
    "PetstoreServedCertificateExpiring",
}
# The series of others the rules read: Prometheus's own and the standard exporters', by who
# serves them (docs/operators/metrics.md names each exporter and its scrape job).
FOREIGN = {
    "up": "prometheus",
    "redis_up": "redis_exporter",
    "pg_up": "postgres_exporter",
    "node_filesystem_avail_bytes": "node_exporter",
    "node_filesystem_size_bytes": "node_exporter",
    "probe_success": "blackbox_exporter",
    "probe_ssl_earliest_cert_expiry": "blackbox_exporter",
}
# The labels an alert keeps for routing, beyond `job`: the failing target's, the queue's.
ROUTED_BY = {
    "PetstoreTargetDown": {"job", "instance"},
    "PetstoreQueueBacklog": {"job", "queue"},
    "PetstoreQueueNotDraining": {"job", "queue"},
}
# absent() has no series to take a label from: it says no job of ours is scraped at all.
WITHOUT_JOB = {"PetstoreMetricsUnavailable"}
# The objectives (deploy/prometheus-alerts.yml's first group): the share allowed to be bad.
AVAILABILITY_BUDGET = 0.001
LATENCY_BOUND = 0.5
LATENCY_BUDGET = 0.01
# The Google SRE workbook's multi-window table: (long window, short window, burn rate).
PAGE_WINDOWS = {("1h", "5m", 14.4), ("6h", "30m", 6)}
TICKET_WINDOWS = {("3d", "6h", 1)}


def _rules() -> list[dict]:
    rules = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())
    return [rule for group in rules["groups"] for rule in group["rules"]]


def _alerts() -> dict[str, dict]:
    return {rule["alert"]: rule for rule in _rules() if "alert" in rule}


def _recorded() -> dict[str, str]:
    return {rule["record"]: rule["expr"] for rule in _rules() if "record" in rule}


def _series(expr: str) -> set[str]:
    """The series names an expression selects."""
    bare = re.sub(r"\{[^}]*\}", "", re.sub(r"\[[^\]]*\]", "", expr))
    bare = LABEL_LISTS.sub("", bare)
    return {
        name
        for name in NAME.findall(bare)
        if name not in PROMQL_WORDS and not re.fullmatch(r"\d+[smhdwy]?", name)
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


def test_the_rules_parse_and_name_only_served_families_recorded_ones_and_exporters(served):
    alerts = _alerts()
    recorded = _recorded()
    assert set(alerts) == ALERTS
    for name, expr in [*recorded.items(), *((a, r["expr"]) for a, r in alerts.items())]:
        names = _series(expr)
        assert names, name
        ours = {n for n in names if n.startswith("petstore_")}
        assert ours <= served, (name, ours - served)
        assert names - ours <= set(recorded) | set(FOREIGN), (name, names - ours)
        assert _balanced(expr), name
    for rule in alerts.values():
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])
    for name in recorded:
        # level:metric:operations (Prometheus's naming of recording rules), per job.
        assert re.fullmatch(r"job(_queue)?:[a-z_]+:[a-z0-9_]+", name), name
        assert any(name in rule["expr"] for rule in alerts.values()), name


def test_no_rule_aggregates_away_the_job():
    """max() across targets would add staging's and production's series together: every
    aggregation says which labels it drops (`without`, the target's `instance` among them),
    and `by` is only for a description's breakdown."""
    for name, expr in [
        *_recorded().items(),
        *((alert, rule["expr"]) for alert, rule in _alerts().items()),
    ]:
        assert not re.search(r"\b(max|min|sum|avg|count)\s*\(", expr), name
        assert not re.search(r"\bby\s*\(", expr), name
        for dropped in re.findall(r"\bwithout\s*\(([^)]*)\)", expr):
            assert "job" not in dropped.replace(" ", "").split(","), name


def test_the_slos_are_the_workbooks_multi_window_burn_rates():
    alerts = _alerts()
    recorded = _recorded()
    for kind, budget in (("errors", AVAILABILITY_BUDGET), ("slow", LATENCY_BUDGET)):
        prefix = "Availability" if kind == "errors" else "Latency"
        for alert, table, severity in (
            (f"Petstore{prefix}BudgetBurnFast", PAGE_WINDOWS, "critical"),
            (f"Petstore{prefix}BudgetBurnSlow", TICKET_WINDOWS, "warning"),
        ):
            rule = alerts[alert]
            assert rule["labels"]["severity"] == severity
            expr = " ".join(rule["expr"].split())
            for long, short, rate in table:
                threshold = f"({rate} * {budget})" if rate != 1 else f"{budget}"
                for window in (long, short):
                    series = f"job:petstore_http_{kind}:ratio_rate{window}"
                    assert f"{series} > {threshold}" in expr, (alert, series)
                    assert f"[{window}]" in recorded[series]
    # The latency objective's bound is a bucket boundary of the histogram it reads.
    assert LATENCY_BOUND in DURATION_BUCKETS
    for name, expr in recorded.items():
        if ":petstore_http_slow:" in name:
            assert f'le="{LATENCY_BOUND}"' in expr
        if ":petstore_http_" in name:
            # The monitoring's own requests (probes, the scrape) are not visitors'.
            [left_out] = set(re.findall(r'route!~"([^"]+)"', expr))
            assert set(left_out.split("|")) == set(UNROUTED.values()), name


def test_checks_failing_platform_wide_counts_the_platforms_codes_only():
    expr = _alerts()["PetstoreChecksFailingPlatformWide"]["expr"]
    [codes] = set(re.findall(r'code=~"([^"]+)"', expr))
    assert set(codes.split("|")) == set(TEMPORARY_CHECK_CODES)


def _promtool(*args: str, cwd: Path = DEPLOY) -> None:
    run = subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def _cases() -> list[dict]:
    tests = yaml.safe_load((DEPLOY / "prometheus-alerts.test.yml").read_text())["tests"]
    return [case for test in tests for case in test["alert_rule_test"]]


def test_promtool_checks_the_rules_and_each_alert_fires_and_stays_quiet_as_tested():
    require(promtool_missing, what="the alert rules' unit tests")
    _promtool("check", "rules", "prometheus-alerts.yml")
    _promtool("test", "rules", "prometheus-alerts.test.yml")
    # Every alert has a test of its own, firing and not.
    cases = _cases()
    for alert in ALERTS:
        outcomes = {bool(case["exp_alerts"]) for case in cases if case["alertname"] == alert}
        assert outcomes == {True, False}, alert


def test_every_alert_fires_with_the_labels_it_is_routed_by():
    """promtool compares the whole label set, so the cases pin them: `job` on every alert,
    and on each the labels its routing needs."""
    routed_jobs = set()
    for case in _cases():
        for fired in case["exp_alerts"]:
            labels = set(fired["exp_labels"]) - {"severity"}
            needed = ROUTED_BY.get(case["alertname"], {"job"})
            if case["alertname"] in WITHOUT_JOB:
                needed = set()
            assert needed <= labels, (case["alertname"], labels)
            routed_jobs.add(fired["exp_labels"].get("job"))
    # Two installations in one Prometheus, told apart.
    assert {"petstore", "petstore-staging"} <= routed_jobs


def test_the_blackbox_configuration_is_the_exporters_and_probes_over_tls():
    require(blackbox_exporter_missing, what="the edge's probe configuration")
    config = DEPLOY / "blackbox.yml"
    run = subprocess.run(
        [BLACKBOX_EXPORTER, f"--config.file={config}", "--config.check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    modules = yaml.safe_load(config.read_text())["modules"]
    assert modules["petstore_https"]["http"]["fail_if_not_ssl"] is True
    assert modules["petstore_tls"]["tcp"]["tls"] is True
    # The documented scrape configuration asks for these modules.
    documented = (ROOT / "docs" / "operators" / "metrics.md").read_text()
    for module in modules:
        assert f"module: [{module}]" in documented, module


def test_the_docs_name_each_exporter_and_say_what_to_do_for_each_alert():
    metrics_page = (ROOT / "docs" / "operators" / "metrics.md").read_text()
    for exporter in set(FOREIGN.values()) - {"prometheus"}:
        assert exporter in metrics_page, exporter
    page = ALERTS_PAGE.read_text()
    runbook = {
        line.split("`")[1]: line
        for line in page.splitlines()
        if line.startswith("| `Petstore") and line.count("|") >= 4
    }
    assert set(runbook) == ALERTS
    for alert, line in runbook.items():
        assert _alerts()[alert]["labels"]["severity"] in line, alert


def _dashboard() -> dict:
    return json.loads((DEPLOY / "grafana-dashboard.json").read_text())


def test_the_dashboard_shows_every_family_and_names_only_served_ones(served):
    dashboard = _dashboard()
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    named = {name for expr in exprs for name in METRIC_NAME.findall(expr)}
    assert named <= served, named - served
    assert all(_balanced(expr) for expr in exprs)
    # Every family has a panel (the enqueue failures are a detail of the task failures).
    families = {name for name in served if name == _family(name)}
    assert families - {"petstore_task_enqueue_failures"} <= {_family(name) for name in named}


def test_the_dashboard_asks_its_datasource_and_shows_one_job():
    dashboard = _dashboard()
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["job"]["type"] == "query"
    assert variables["job"]["multi"] is False
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            selectors = re.findall(r"\bpetstore_[a-z0-9_]+(\{[^}]*\})?", target["expr"])
            assert selectors and all('job=~"$job"' in s for s in selectors), target["expr"]


def test_the_status_panel_shows_every_routes_answers_added_up(tmp_path):
    """Two routes answering 200 at 10 and 5 a second, as both web processes report them:
    the panel reads 15 (the old `max by (status)` read the busiest route's 10)."""
    require(promtool_missing, what="evaluating the dashboard's status panel")
    [panel] = [p for p in _dashboard()["panels"] if p["title"].startswith("HTTP answers by status")]
    [target] = panel["targets"]
    expr = target["expr"].replace("$job", "petstore")
    series = [
        (instance, route, per_minute)
        for instance in ("web1:8000", "web2:8000")
        for route, per_minute in (("v1/pets", 600), ("v1/pets/<int:pet_id>", 300))
    ]
    test = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": (
                            f'petstore_http_requests_total{{job="petstore", '
                            f'instance="{instance}", route="{route}", status="200"}}'
                        ),
                        "values": f"0+{per_minute}x20",
                    }
                    for instance, route, per_minute in series
                ],
                "promql_expr_test": [
                    {
                        "expr": expr,
                        "eval_time": "10m",
                        "exp_samples": [{"labels": '{status="200"}', "value": 15}],
                    }
                ],
            }
        ],
    }
    (tmp_path / "status.test.yml").write_text(yaml.safe_dump(test))
    _promtool("test", "rules", "status.test.yml", cwd=tmp_path)


def _family(name: str) -> str:
    for suffix in ("_total", *SAMPLE_SUFFIXES):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name
