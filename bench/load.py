"""Driving load with wrk and reading its answer.

Every figure is measured side by side: the two sides of a comparison run one
after the other, alternating, several rounds each. The absolute figures shown
are each side's median; the ratio is the median of the per-round ratios
(`paired`). Absolute numbers drift on shared machines; ratios taken this way
hold.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Required, TypedDict, Unpack

WRK_DIR = Path(__file__).resolve().parent / "wrk"


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """wrk's load, the same for every benchmark of a run."""
    parser.add_argument("--seconds", type=int, default=2, help="length of one round")
    parser.add_argument("--rounds", type=int, default=12, help="rounds per side")
    parser.add_argument("--connections", type=int, default=16)


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


@dataclass
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int  # non-2xx/3xx answers plus socket errors
    created: int | None = None  # 201s counted by a Lua script
    created_ids: list[int] = field(default_factory=list)  # the ids those 201s returned


@dataclass
class Side:
    label: str
    runs: list[Run]
    warmups: list[Run] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU ms per request, one per run
    # The same, per part of what serves it (the server, PostgreSQL), when measured so.
    cpu_parts: dict[str, list[float]] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return statistics.median(r.rps for r in self.runs)

    @property
    def p50_ms(self) -> float:
        return statistics.median(r.p50_ms for r in self.runs)

    @property
    def p99_ms(self) -> float:
        return statistics.median(r.p99_ms for r in self.runs)

    @property
    def cpu_ms(self) -> float | None:
        """Median CPU milliseconds per request, when the side was measured with `cpu`."""
        return statistics.median(self.cpu) if self.cpu else None

    def part_ms(self, part: str) -> float | None:
        """Median CPU milliseconds per request of one part (None when not measured)."""
        runs = self.cpu_parts.get(part)
        return statistics.median(runs) if runs else None

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.runs)


def paired(a: Side, b: Side, attr: str) -> float:
    """Median over rounds of a/b, each round's two sides measured back to back: slow
    drift in the machine's load cancels within a pair."""
    pairs = zip(a.runs, b.runs, strict=True)
    return statistics.median(getattr(x, attr) / getattr(y, attr) for x, y in pairs)


def spread(a: Side, b: Side, attr: str) -> tuple[float, float]:
    """The lowest and highest per-round a/b: how much one round can be trusted."""
    ratios = [getattr(x, attr) / getattr(y, attr) for x, y in zip(a.runs, b.runs, strict=True)]
    return min(ratios), max(ratios)


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not match:
        raise ValueError(f"unreadable wrk latency {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse(output: str) -> Run:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    errors = (int(non2xx.group(1)) if non2xx else 0) + (
        sum(int(g) for g in socket.groups()) if socket else 0
    )
    created = re.search(r"^CREATED (\d+)$", output, re.M)
    ids = re.search(r"^CREATED_IDS ([\d,]*)$", output, re.M)
    return Run(
        rps, p50, p99, requests, errors,
        int(created.group(1)) if created else None,
        [int(i) for i in ids.group(1).split(",") if i] if ids else [],
    )  # fmt: skip


class WrkOptions(TypedDict, total=False):
    """What a wrk run is told, besides its URL and environment."""

    seconds: Required[int]
    connections: Required[int]
    headers: dict[str, str] | None
    script: str | None


def wrk_command(url: str, **options: Unpack[WrkOptions]) -> list[str]:
    seconds, connections = options["seconds"], options["connections"]
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    for name, value in (options.get("headers") or {}).items():
        cmd += ["-H", f"{name}: {value}"]
    if script := options.get("script"):
        cmd += ["-s", str(WRK_DIR / script)]
    cmd.append(url)
    return cmd


def wrk(url: str, *, env: dict[str, str] | None = None, **options: Unpack[WrkOptions]) -> Run:
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    cmd = wrk_command(url, **options)
    # BENCH_RUN makes every invocation's generated names unique (see post_pets.lua).
    env = {**os.environ, **(env or {}), "BENCH_RUN": uuid.uuid4().hex[:12]}
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return parse(out.stdout)


def side_by_side(
    a: tuple[str, dict], b: tuple[str, dict], *, rounds: int, **common
) -> tuple[Side, Side]:
    """Run a and b alternately `rounds` times each (after one warm-up of each)."""
    side_a, side_b = interleaved(a, b, rounds=rounds, **common)
    return side_a, side_b


def interleaved(*sides: tuple[str, dict], rounds: int, **common) -> list[Side]:
    """Run every side in turn, the same order each round, `rounds` times (after one warm-up
    of each). A side's `cpu` (a callable: CPU seconds used so far by what serves it, or a
    dict of such callables by part) gives its CPU per request too, read around each run.
    A side's `runner` (called with `seconds` and `connections`) runs it instead of wrk."""
    warm = {**common, "seconds": 2}
    measured = []
    for label, kwargs in sides:
        measured.append(Side(label, [], [_run({**warm, **kwargs})]))
    for _ in range(rounds):
        for side, (_, kwargs) in zip(measured, sides, strict=True):
            cpu = kwargs.get("cpu")
            parts = cpu if isinstance(cpu, dict) else {"": cpu} if cpu else {}
            before = {name: counter() for name, counter in parts.items()}
            side.runs.append(_run({**common, **kwargs}))
            requests = max(side.runs[-1].requests, 1)
            used = {name: 1000 * (parts[name]() - before[name]) / requests for name in parts}
            if used:
                side.cpu.append(sum(used.values()))
            if isinstance(cpu, dict):
                for name, ms in used.items():
                    side.cpu_parts.setdefault(name, []).append(ms)
    return measured


def _run(options: dict) -> Run:
    options = {k: v for k, v in options.items() if k != "cpu"}
    if runner := options.pop("runner", None):
        return runner(seconds=options["seconds"], connections=options["connections"])
    return wrk(**options)
