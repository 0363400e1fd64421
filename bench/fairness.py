"""Fairness: one tenant's silent name servers against another tenant's Verify → Active.

One project (Pro) holds 10 names whose name server never answers (the loopback DNS server
black-holes them) and presses Verify on them in a loop, as the dashboard's button does
(`tasks.request_check`: the service, then the check queued on commit), refused only by
what a person meets (the per-domain cooldown, a check still under way). Another project
(Enterprise) adds a domain whose CNAME is right and chooses Verify; the figure is the time
from Verify to the domain's row reading `active` (checked on the `checks` worker, its
certificate issued by the local CA on the `certificates` worker, DOMAINS_CERT_ISSUE_DELAY
0). The same is measured with no attacker, then with one; the target is a p90 (and a
median) within 1.5x of the quiet one.

The workers are Procfile.production's `worker` (checks) and `certificates` lines, run as
written; PostgreSQL and Redis on loopback, production settings with the hourly limits off
(bench/environment.py), so the attacker is held back by the queues and the deadline alone.

`.venv/bin/python bench/fairness.py` runs it alone and rewrites its section of
bench/results.md; `bench/run.py --fairness` runs it with the rest.

Then the webhooks' case (bench/fairness_webhooks.py, in the same section): one project's
10 endpoints accept the connection and never answer, and a burst of its events is queued
as beat queues them, every second; another project's deliveries to a receiver that
answers at once are timed from queueing to arrival, with no attacker, then with it, on
Procfile.production's `webhooks` worker with the in-flight caps as set (`python -m
bench.fairness_webhooks` alone: with them off too, printed). BENCH_FAIRNESS_DOMAINS sets the
victim's domains and deliveries per run, BENCH_WEBHOOK_EVENTS the attacker's events (each one
delivery per endpoint). What the benchmarks share is bench/fairness_platform.py.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from django.conf import settings  # noqa: E402
from django.core.exceptions import ValidationError  # noqa: E402
from django.db import connection  # noqa: E402

from bench import fairness_webhooks, sections  # noqa: E402
from bench.environment import ENV, create_database, machine, migrate  # noqa: E402
from bench.fairness_platform import (  # noqa: E402 - which sets Django up
    DOMAIN_LIMIT,
    DOMAINS,
    SPACING,
    TARGET,
    Platform,
    make_project,
)
from bench.processes import procfile_lines  # noqa: E402
from domains import tasks  # noqa: E402
from domains.choices import CheckCode, Plan, State  # noqa: E402
from domains.models import Domain  # noqa: E402
from domains.services.custom_domains import domain_add  # noqa: E402

SECTION = "## Fairness"
# Where the section goes when the file has none yet: before these.
FOLLOWED_BY = ("## TLS edge",)
SILENT = 10
PRESS_EVERY = 0.05  # seconds between two presses of the attacker's Verify
# For comparison: one prefork worker of two processes consuming both queues (the
# single-worker layout the production files had before the queues).
ONE_WORKER = {"one": "celery -A petstore worker -n one@%h --loglevel INFO"}


def verify_to_active(platform: Platform, project, owner, hostname: str) -> float:
    """Add domain (its CNAME right), Verify, then seconds until the row reads active."""
    platform.dns.add(hostname, "CNAME", settings.PLATFORM_CNAME_TARGET + ".")
    domain = domain_add(project=project, hostname=hostname, actor=owner)
    time.sleep(SPACING)
    started = time.perf_counter()
    tasks.request_check(domain=domain, actor=owner)
    while time.perf_counter() - started < DOMAIN_LIMIT:
        if Domain.objects.filter(pk=domain.pk, state=State.ACTIVE).exists():
            return time.perf_counter() - started
        time.sleep(0.01)
    log = (platform.workdir / "certificates.log").read_text(errors="replace")[-2000:]
    raise SystemExit(f"fairness: {hostname} not active in {DOMAIN_LIMIT:.0f} s\n{log}")


class Attacker(threading.Thread):
    """Presses Verify on every silent name, round and round, until told to stop."""

    def __init__(self, project, owner, domain_ids: list[int]):
        super().__init__(daemon=True)
        self.project, self.owner, self.domain_ids = project, owner, domain_ids
        self.stopping = threading.Event()
        self.accepted = self.refused = 0

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                for domain_id in self.domain_ids:
                    try:
                        tasks.request_check(
                            domain=Domain.objects.get(pk=domain_id), actor=self.owner
                        )
                        self.accepted += 1
                    except ValidationError:
                        self.refused += 1
                    if self.stopping.wait(PRESS_EVERY):
                        return
        finally:
            connection.close()


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def measure() -> list[str]:
    create_database()
    migrate(ENV)
    begun = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    workdir = Path(tempfile.mkdtemp(prefix="fairness-"))
    platform = Platform(workdir)
    platform.dns.add(settings.PLATFORM_CNAME_TARGET, "A", "127.0.0.1")
    production = {name: procfile_lines()[name] for name in ("worker", "certificates")}
    runs = []
    try:
        for label, lines in (("production", production), ("one worker", ONE_WORKER)):
            runs.append(_run(platform, label, lines))
            platform.stop_workers()
    finally:
        platform.stop()
    webhooks = fairness_webhooks.measure_webhooks(caps_off=False)
    elapsed = time.monotonic() - begun
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    return section(runs, webhooks, elapsed, load)


@dataclass
class Run:
    workers: list[str]
    quiet: list[float]
    attacked: list[float]
    accepted: int
    refused: int
    timeouts: int


def _run(platform: Platform, label: str, lines: dict[str, str]) -> Run:
    """Both sides on these workers: the victim alone, then with the attacker pressing."""
    workers = platform.start_workers(lines)
    victim, victim_owner = make_project("fair-victim", Plan.ENTERPRISE)
    attacker, attacker_owner = make_project("fair-attacker", Plan.PRO)
    silent = []
    for i in range(SILENT):
        hostname = f"silent-{i}.fair-attacker.test"
        platform.dns.blackhole(hostname)
        silent.append(domain_add(project=attacker, hostname=hostname, actor=attacker_owner).pk)
    verify_to_active(platform, victim, victim_owner, "warm-up.fair-victim.test")  # the CA
    quiet = [
        verify_to_active(platform, victim, victim_owner, f"quiet-{i}.fair-victim.test")
        for i in range(DOMAINS)
    ]
    print(f"fairness ({label}): quiet " + " ".join(f"{t:.2f}" for t in quiet), flush=True)
    pressing = Attacker(attacker, attacker_owner, silent)
    pressing.start()
    try:
        time.sleep(5)  # the attacker's checks fill the queue first
        attacked = [
            verify_to_active(platform, victim, victim_owner, f"attacked-{i}.fair-victim.test")
            for i in range(DOMAINS)
        ]
    finally:
        pressing.stopping.set()
        pressing.join()
    print(f"fairness ({label}): attacked " + " ".join(f"{t:.2f}" for t in attacked), flush=True)
    timeouts = Domain.objects.filter(pk__in=silent, check_code=CheckCode.DNS_TIMEOUT).count()
    return Run(workers, quiet, attacked, pressing.accepted, pressing.refused, timeouts)


def _rows(run: Run, label: str, *, target: bool) -> list[str]:
    rows = []
    for figure, of in (("median", statistics.median), ("p90", _p90)):
        ratio = of(run.attacked) / of(run.quiet)
        met = ("met" if ratio <= TARGET else "MISSED") if target else "-"
        goal = f"≤ {TARGET}x" if target else "-"
        rows.append(
            f"| {label}: Verify → Active, {figure} | {of(run.quiet):.2f} s | "
            f"{of(run.attacked):.2f} s | {ratio:.2f} | {goal} | {met} |"
        )
    return rows


def _note(run: Run, label: str) -> str:
    return (
        f"- {label}: the attacker's Verify presses: {run.accepted} accepted (each a check that "
        f"waits out the deadline), {run.refused} refused by the cooldown or a check still under "
        f"way; {run.timeouts} of its {SILENT} names recorded as `dns_timeout`. Each domain: "
        + " ".join(f"{t:.2f}" for t in run.quiet)
        + " s (no attacker); "
        + " ".join(f"{t:.2f}" for t in run.attacked)
        + " s (attacked)."
    )


def section(runs: list[Run], webhooks: list[str], elapsed: float, load: str) -> list[str]:
    production, one = runs
    return [
        SECTION,
        "",
        f"Run on {dt.date.today().isoformat()} by `bench/fairness.py` in {elapsed:.0f} s, on "
        f"{machine()}. Load average before / after the run: {load}. The machine is shared: "
        "other work running at the same time shows in the absolute figures.",
        "",
        f"One project holds {SILENT} names whose name server never answers (black-holed by the "
        "loopback DNS server) and presses Verify on them in a loop, every "
        f"{PRESS_EVERY * 1000:.0f} ms, as the dashboard does (`tasks.request_check`); another "
        f"project's {DOMAINS} domains, each set up right, go Verify → Active (the row reads "
        "`active`: checked, then its certificate issued by the local CA, "
        f"DOMAINS_CERT_ISSUE_DELAY 0), one every {SPACING:g} s or so, first with no attacker, "
        "then with it (pressing for 5 s before the first). DOMAINS_VERIFY_DEADLINE "
        f"{settings.DOMAINS_VERIFY_DEADLINE:g} s, DOMAINS_VERIFY_COOLDOWN "
        f"{settings.DOMAINS_VERIFY_COOLDOWN} s; the hourly limits off, so the queues and the "
        "deadline alone hold the attacker back. Production: the workers as "
        "Procfile.production starts them, "
        + "; ".join(production.workers)
        + ". For comparison, one worker: "
        + "; ".join(one.workers)
        + " (prefork, a process per core, both queues).",
        "",
        "| Figure | No attacker | With the attacker | Ratio | Target | |",
        "|---|---|---|---|---|---|",
        *_rows(production, "Production", target=True),
        *_rows(one, "One prefork worker", target=False),
        "",
        _note(production, "Production"),
        _note(one, "One prefork worker"),
        "",
        *webhooks,
        "",
        "Reproduce: `.venv/bin/python bench/fairness.py` (PostgreSQL and Redis on loopback; "
        "both cases), or `bench/run.py --fairness` with the rest; `python -m "
        "bench.fairness_webhooks` the webhooks' case alone, the caps off too (printed). Why: "
        "docs/decisions/domains.md, Fairness; docs/decisions/webhooks.md.",
        "",
    ]


def kept_section() -> list[str]:
    """This section of bench/results.md as it stands (for a run that does not measure it)."""
    return sections.kept(SECTION, FOLLOWED_BY)


def write_section(lines: list[str]) -> None:
    """Replace this section of bench/results.md, keeping the rest."""
    sections.write(SECTION, FOLLOWED_BY, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    write_section(measure())
