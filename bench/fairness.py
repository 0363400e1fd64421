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

The domain doctor's case is the same with another attacker: its names have no record yet
(so each check asks the zone's own name servers, domains/dns/doctor.py) and live in a zone
whose NS records list 10 names of 400 silent addresses each (a server on every loopback
address that answers none: bench/fairness_platform.py); then again with 20 addresses a name,
as many as one answer over UDP holds, so that each check asks 10 silent servers and waits
out its deadline. `.venv/bin/python bench/fairness.py --doctor` runs that case alone
(production's workers) and rewrites its part of the section.

The workers are Procfile.production's `worker` (checks) and `certificates` lines, run as
written; PostgreSQL and Redis on loopback, production settings with the hourly limits off
(bench/environment.py), so the attacker is held back by the queues and the deadline alone.

`.venv/bin/python bench/fairness.py` runs it alone and rewrites its section of
bench/results.md; `bench/run.py --fairness` runs it with the rest.

Then the webhooks' case, in the same section: bench/fairness_webhooks.py (its docstring
says what it measures); what the benchmarks share is bench/fairness_platform.py.
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
from domains.choices import CheckCode, FindingCode, Plan, State  # noqa: E402
from domains.models import Domain  # noqa: E402
from domains.services.custom_domains import domain_add  # noqa: E402

SECTION = "## Fairness"
# Where the section goes when the file has none yet: before these.
FOLLOWED_BY = ("## TLS edge",)
SILENT = 10
# The doctor's case: the attacker's zone, its NS names, and the silent addresses of each.
DOCTOR_ZONE = "fair-doctor.test"
DOCTOR_NAMES = 10
DOCTOR_ADDRESSES = 400
# ... and the most that fit one answer over UDP (512 bytes), so the doctor asks them.
DOCTOR_FITTING = 20
DOCTOR_BLOCK = "Domain doctor:"
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


def black_holed(platform: Platform) -> list[str]:
    """The attacker's names, each black-holed by the loopback DNS server."""
    hostnames = [f"silent-{i}.fair-attacker.test" for i in range(SILENT)]
    for hostname in hostnames:
        platform.dns.blackhole(hostname)
    return hostnames


def silent_zone(platform: Platform, each: int = DOCTOR_ADDRESSES) -> list[str]:
    """The attacker's names (no record) in DOCTOR_ZONE, whose NS records list DOCTOR_NAMES
    names of `each` addresses each, every one silent."""
    names = [f"ns-{n}.{DOCTOR_ZONE}" for n in range(DOCTOR_NAMES)]
    for n, name in enumerate(names):
        addresses = (f"127.{10 + n}.{i // 250}.{i % 250 + 1}" for i in range(each))
        platform.dns.remove(name, "A")
        platform.dns.add(name, "A", *addresses)
    platform.dns.remove(DOCTOR_ZONE, "NS")
    platform.dns.add(DOCTOR_ZONE, "NS", *(f"{name}." for name in names))
    return [f"silent-{i}.{DOCTOR_ZONE}" for i in range(SILENT)]


def fitting_zone(platform: Platform) -> list[str]:
    """silent_zone's names, each of DOCTOR_FITTING addresses: every check asks 10 of them."""
    return silent_zone(platform, DOCTOR_FITTING)


def doctor_runs(platform: Platform, lines: dict[str, str]) -> list[Run]:
    """The doctor's case: the zone of DOCTOR_ADDRESSES addresses a name, then DOCTOR_FITTING."""
    runs = [_run(platform, "doctor", lines, attack=silent_zone, slug="fair-doctor")]
    platform.stop_workers()
    return [
        *runs,
        _run(platform, "doctor, fitting", lines, attack=fitting_zone, slug="fair-doctor"),
    ]


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
        runs += doctor_runs(platform, production)
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
    # The attacker's names whose diagnosis says servers were left unasked.
    unasked: int = 0


def _run(
    platform: Platform,
    label: str,
    lines: dict[str, str],
    *,
    attack=black_holed,
    slug: str = "fair-attacker",
) -> Run:
    """Both sides on these workers: the victim alone, then with the attacker (project `slug`)
    pressing Verify on the names `attack` makes."""
    workers = platform.start_workers(lines)
    victim, victim_owner = make_project("fair-victim", Plan.ENTERPRISE)
    attacker, attacker_owner = make_project(slug, Plan.PRO)
    silent = [
        domain_add(project=attacker, hostname=hostname, actor=attacker_owner).pk
        for hostname in attack(platform)
    ]
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
    unasked = sum(
        FindingCode.NAMESERVERS_UNASKED in {f["code"] for f in diagnosis.get("findings", [])}
        for diagnosis in Domain.objects.filter(pk__in=silent).values_list(
            "check_diagnosis", flat=True
        )
        if diagnosis
    )
    return Run(workers, quiet, attacked, pressing.accepted, pressing.refused, timeouts, unasked)


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


def doctor_block(runs: list[Run], when: str) -> list[str]:
    """The doctor's case, a part of the section of its own (`--doctor` rewrites it alone)."""
    labels = (
        f"Silent zone, {DOCTOR_ADDRESSES} addresses a name",
        f"Silent zone, {DOCTOR_FITTING} addresses a name",
    )
    return [
        f"{DOCTOR_BLOCK} the same on production's workers ({when}), the attacker's {SILENT} "
        f"names with no record yet in a zone whose NS records list {DOCTOR_NAMES} names of "
        f"{DOCTOR_ADDRESSES} silent addresses each ({DOCTOR_NAMES * DOCTOR_ADDRESSES:,}), so "
        "each of its checks asks the zone's own servers (the doctor's caps: "
        'docs/decisions/domains.md, "The domain doctor"); then of '
        f"{DOCTOR_FITTING} addresses each, as many as one answer over UDP holds, so that each "
        "check asks 10 silent servers and waits out its deadline.",
        "",
        "| Figure | No attacker | With the attacker | Ratio | Target | |",
        "|---|---|---|---|---|---|",
        *(
            row
            for run, label in zip(runs, labels, strict=True)
            for row in _rows(run, label, target=True)
        ),
        "",
        *(
            f"- {label}: the attacker's Verify presses: {run.accepted} accepted, {run.refused} "
            f"refused by the cooldown or a check still under way; {run.unasked} of its {SILENT} "
            "names' diagnoses say servers were left unasked (`nameservers_unasked`). Each "
            "domain: "
            + " ".join(f"{t:.2f}" for t in run.quiet)
            + " s (no attacker); "
            + " ".join(f"{t:.2f}" for t in run.attacked)
            + " s (attacked)."
            for run, label in zip(runs, labels, strict=True)
        ),
        "",
    ]


def with_doctor_block(lines: list[str], block: list[str]) -> list[str]:
    """The section's lines with the doctor's part replaced (or put before the webhooks')."""
    starts = [i for i, line in enumerate(lines) if line.startswith(DOCTOR_BLOCK)]
    webhooks = next(i for i, line in enumerate(lines) if line.startswith("Webhooks:"))
    if not starts:
        return lines[:webhooks] + block + lines[webhooks:]
    return lines[: starts[0]] + block + lines[webhooks:]


def measure_doctor() -> list[str]:
    """The doctor's case alone, on production's workers, in the section as it stands."""
    create_database()
    migrate(ENV)
    begun = time.monotonic()
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    platform = Platform(Path(tempfile.mkdtemp(prefix="fairness-doctor-")))
    platform.dns.add(settings.PLATFORM_CNAME_TARGET, "A", "127.0.0.1")
    production = {name: procfile_lines()[name] for name in ("worker", "certificates")}
    try:
        runs = doctor_runs(platform, production)
    finally:
        platform.stop()
    load = f"{load_before} / " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    when = (
        f"run alone on {dt.date.today().isoformat()} by `bench/fairness.py --doctor` in "
        f"{time.monotonic() - begun:.0f} s, {DOMAINS} domains a side, load average before / "
        f"after {load}"
    )
    return with_doctor_block(kept_section(), doctor_block(runs, when))


def section(runs: list[Run], webhooks: list[str], elapsed: float, load: str) -> list[str]:
    production, one, *doctor = runs
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
        *doctor_block(doctor, "the same run"),
        *webhooks,
        "",
        "Reproduce: `.venv/bin/python bench/fairness.py` (PostgreSQL and Redis on loopback; "
        "every case), or `bench/run.py --fairness` with the rest; `bench/fairness.py --doctor` "
        "the doctor's case alone; `python -m "
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
    write_section(measure_doctor() if "--doctor" in sys.argv[1:] else measure())
