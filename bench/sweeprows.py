"""bench/results.md's rows of the domain sweep benchmark (bench/domains_sweep.py): each run's
figures, the targets (docs/decisions/domain-sweep.md) and the verdicts."""

from __future__ import annotations

from dataclasses import dataclass

TARGET = 15.0  # seconds for 10,000 pending (docs/decisions/domain-sweep.md)
TARGET_SIZE = 10_000
FLAT = 1.2  # the largest size's cost per domain within this of the smallest's
# One sweep with nothing due, whatever the number of active domains: almost nothing.
IDLE_TARGET = 1.0  # seconds


@dataclass
class Run:
    n: int
    workers: int
    seconds: float
    done: int
    peak_rss: int
    idle_rss: int
    codes: dict[str, int]
    cpu: dict[str, float]
    db_size: int
    db_peak_rss: int

    @property
    def per_domain_ms(self) -> float:
        return self.seconds * 1000 / self.n


@dataclass
class Idle:
    n: int
    seconds: float
    statements: int
    checks: int


def mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _rss(run: Run) -> str:
    growth = (run.peak_rss - run.idle_rss) / 2**20
    return f"{mb(run.peak_rss)} (idle {mb(run.idle_rss)}, +{growth:.0f} MB)"


def named_workers(k: int) -> str:
    return f"{k} checks worker{'s' if k > 1 else ''}"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def _clean(run: Run) -> bool:
    """Every domain checked, none of them timed out (a timeout ends a check early: it
    measures DOMAINS_DNS_LIFETIME and a DNS server that fell behind, not the sweep)."""
    return run.done >= run.n and not run.codes.get("dns_timeout")


def _timeouts(run: Run) -> str:
    timeouts = run.codes.get("dns_timeout", 0)
    return f", {timeouts:,} dns_timeout" if timeouts else ""


def rows_for(runs: list[Run], idle: Idle | None = None) -> list[str]:
    """bench/results.md's rows: per number of workers, the cost per domain of each size
    against the smallest, the 10,000 target, memory; then workers against one worker."""
    rows = []
    for k in sorted({run.workers for run in runs}):
        mine = sorted((run for run in runs if run.workers == k), key=lambda run: run.n)
        small = mine[0]
        for large in mine[1:]:
            ratio = large.per_domain_ms / small.per_domain_ms
            rows.append(
                f"| Domain sweep: cost per domain, {small.n:,} vs {large.n:,} pending, "
                f"{named_workers(k)} | {small.per_domain_ms:.2f} ms/domain ({small.seconds:.1f} s"
                f"{_timeouts(small)}) | {large.per_domain_ms:.2f} ms/domain "
                f"({large.seconds:.1f} s{_timeouts(large)}) | {ratio:.2f} | ≤ {FLAT}x | "
                f"{_verdict(ratio <= FLAT and _clean(small) and _clean(large))} |"
            )
        for run in mine:
            if run.n == TARGET_SIZE:
                rows.append(
                    f"| Domain sweep: {run.n:,} pending re-checked on {named_workers(k)} | "
                    f"limit {TARGET:.0f} s | {run.seconds:.1f} s ({run.done:,} checked"
                    f"{_timeouts(run)}) | {run.seconds / TARGET:.2f} | < {TARGET:.0f} s | "
                    f"{_verdict(run.seconds < TARGET and _clean(run))} |"
                )
        if len(mine) > 1:
            large = mine[-1]
            rows.append(
                f"| Domain sweep: workers' peak RSS (process trees), {small.n:,} vs "
                f"{large.n:,}, {named_workers(k)} | {_rss(small)} | {_rss(large)} | "
                f"{large.peak_rss / small.peak_rss:.2f} | flat (≤ 1.2x) | "
                f"{_verdict(large.peak_rss / small.peak_rss <= 1.2)} |"
            )
            rows.append(
                f"| Domain sweep: database, {small.n:,} vs {large.n:,}, {named_workers(k)}: size; "
                f"peak RSS of its backends | {mb(small.db_size)}; {mb(small.db_peak_rss)} | "
                f"{mb(large.db_size)}; {mb(large.db_peak_rss)} | "
                f"{large.db_peak_rss / small.db_peak_rss:.2f} | - | - |"
            )
    one = {run.n: run for run in runs if run.workers == 1}
    for run in runs:
        base = one.get(run.n)
        if run.workers > 1 and base is not None:
            rows.append(
                f"| Domain sweep: {run.n:,} pending, 1 vs {named_workers(run.workers)} | "
                f"{base.seconds:.1f} s | {run.seconds:.1f} s | "
                f"{base.seconds / run.seconds:.2f}x as fast{_timeouts(run)} | faster (2 cores) | "
                f"{_verdict(run.seconds < base.seconds and _clean(base) and _clean(run))} |"
            )
    if idle is not None:
        rows.append(
            f"| Domain sweep: one sweep among {idle.n:,} active domains, none due | "
            f"limit {IDLE_TARGET:.0f} s | {idle.seconds * 1000:.0f} ms ({idle.statements} "
            f"statements, {idle.checks} claimed) | {idle.seconds / IDLE_TARGET:.2f} | "
            f"< {IDLE_TARGET:.0f} s | {_verdict(idle.seconds < IDLE_TARGET)} |"
        )
    return rows
