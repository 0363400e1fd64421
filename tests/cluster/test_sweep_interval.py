"""DOMAINS_SWEEP_INTERVAL sets how often beat sweeps, and the two times counted in sweeps:
a claimed check's lease (five sweeps, and never less than the longest a task may run and one
sweep more) and the age at which certificate work counts as lost (five sweeps, and never less
than the longest an issuance may run and one sweep more)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.processes import ROOT

READ = (
    "import json, django; django.setup(); from django.conf import settings; "
    "from domains import policy; "
    "print(json.dumps([settings.CELERY_BEAT_SCHEDULE['domains-sweep']['schedule'], "
    "policy.sweep_lease().total_seconds(), policy.cert_lost_at_sweep().total_seconds()]))"
)


def sweep_times(**env: str) -> list[float]:
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", READ],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "petstore.settings",
             "SECRET_KEY": "test", "PETSTORE_ENV_FILE": "", **env},
    )  # fmt: skip
    return json.loads(result.stdout.splitlines()[-1])


def test_by_default_a_sweep_a_minute_six_minutes_of_lease_and_five_before_work_is_lost():
    # The lease: CELERY_TASK_TIME_LIMIT (300 s) and a sweep.
    assert sweep_times() == [60.0, 360.0, 300.0]


def test_a_shorter_interval_shortens_the_lost_time_never_the_lease_below_a_task():
    assert sweep_times(DOMAINS_SWEEP_INTERVAL="5") == [5.0, 305.0, 25.0]
    assert sweep_times(DOMAINS_SWEEP_INTERVAL="5", CELERY_TASK_TIME_LIMIT="10") == [
        5.0,
        25.0,
        25.0,
    ]


def test_work_at_an_acme_ca_is_not_lost_before_its_run_may_end():
    # DNS lifetime 5 s, then the CA's validation and signature, 30 s each, the order's
    # storing through a database outage, 10 s, and a sweep.
    acme = {"DOMAINS_CA": "acme", "DOMAINS_ACME_DIRECTORIES": "https://ca.example/dir"}
    assert sweep_times(DOMAINS_SWEEP_INTERVAL="5", **acme) == [5.0, 305.0, 80.0]
