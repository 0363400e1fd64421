"""The machine tests/deploy/test_systemd_boot.py drills: a container booted by systemd-nspawn
from .ci/systemd-drill-image's root file system (Debian 12, systemd 252, its own PostgreSQL
and Redis on its own loopback), this checkout at /opt/petstore and the units of
deploy/systemd/ as shipped; and the clients that send requests through its edge.

One container at a time on a host: two would share two cores, and every wait would be
twice as long as the drill expects. A second run (another checkout, or another xdist worker:
`--dist loadgroup` no longer keeps a group on one worker under pytest 9.2) fails at once,
saying so, rather than late and unexplained.

Every wait is for something the machine says (a unit's state or restart count, a journal
line, an HTTP answer), polled until it comes or WAIT has passed; then the test fails with
the journal of the units it waited on. A failed test's report adds every unit's state and
journal (tests/deploy/conftest.py), so CI's log says what happened.
"""

from __future__ import annotations

import contextlib
import fcntl
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from tests.needs import SYSTEMD_DRILL_ROOT
from tests.processes import ROOT

SERVICES = [
    "petstore-web",
    "petstore-edge",
    "petstore-worker",
    "petstore-certificates",
    "petstore-webhooks",
    "petstore-beat",
]
# Debian runs the cluster as postgresql@15-main; postgresql.service only starts and stops it.
EVERY_UNIT = ["petstore-release", *SERVICES, "postgresql@15-main", "redis-server"]
# How long a wait lasts: a boot of six Django processes, each started twice, on two loaded
# cores takes a minute or two; each test's own timeout is above this.
WAIT = 300.0
POLL = 0.5
# Held while a container runs: one drill at a time on this host.
LOCK = Path("/run/lock/petstore-drill.lock")
HOMES = [Path("/root"), Path("/home")]
THROUGH_THE_EDGE = "https://app.petstore.example/readyz"
# The edge's HTTPS port for the dashboard's host, in the container.
RESOLVE = "app.petstore.example:443:127.0.0.1"
# One line an answer: the HTTP status and curl's exit code ("000 7": refused).
ANSWERED = "200 0"


@dataclass
class Machine:
    leader: int  # the container's systemd, as the host sees it
    booted_at: float = field(default_factory=time.monotonic)

    def run(self, *command: str, check: bool = True) -> str:
        result = subprocess.run(  # noqa: S603 (our own container)
            ["nsenter", f"--target={self.leader}", "--all", *command],
            capture_output=True,
            text=True,
            check=False,
        )
        if check and result.returncode:
            pytest.fail(f"{shlex.join(command)}: {result.stdout}{result.stderr}")
        return result.stdout.strip()

    def states(self, *units: str) -> list[str]:
        return self.run("systemctl", "is-active", *units, check=False).split()

    def show(self, unit: str, prop: str) -> str:
        return self.run("systemctl", "show", "--value", "-p", prop, unit)

    def number(self, unit: str, prop: str) -> int:
        return int(self.show(unit, prop))

    def cursor(self) -> str:
        """Where the journal is now: `journal(after=...)` reads what came since."""
        shown = self.run("journalctl", "--no-pager", "-n", "0", "--show-cursor")
        return shown.rsplit("-- cursor: ", 1)[1]

    def journal(self, *units: str, lines: int = 150, after: str = "") -> str:
        """The last `lines` lines the units logged (since the cursor `after`), but the
        edge's access lines: one a request of the drill's clients, they would leave room for
        nothing else."""
        selected = [word for unit in units for word in ("-u", unit)]
        since = [f"--after-cursor={after}"] if after else ["-n", "20000"]
        text = self.run(
            "journalctl", "--no-pager", "-o", "short-precise", *since, *selected, check=False
        )
        kept = [line for line in text.splitlines() if "http.log.access" not in line]
        return "\n".join(kept[-lines:])

    def report(self, *units: str) -> str:
        """What each unit is doing and what it logged last, one after another (their
        tracebacks would interleave): what a failed test prints."""
        units = units or tuple(EVERY_UNIT)
        states = zip(units, self.states(*units), strict=False)
        return "\n".join(
            f"--- {unit}: {state}\n{self.journal(unit, lines=40)}" for unit, state in states
        )

    def until(self, condition: Callable[[], object], what: str, *units: str) -> None:
        """Return once `condition()` holds; fail after WAIT with the journal of `units`
        (a failed test's report then adds every unit's)."""
        deadline = time.monotonic() + WAIT
        while not condition():
            if time.monotonic() > deadline:
                waited_on = self.report(*units) if units else ""
                pytest.fail(f"never {what} in {WAIT:.0f} s\n{waited_on}")
            time.sleep(POLL)

    def up(self) -> None:
        """Every service running, PostgreSQL started (by the boot's test, or here when a
        test runs alone)."""
        self.run("systemctl", "start", "postgresql.service")
        self.until(lambda: self.states(*SERVICES) == ["active"] * 6, "started every service")

    def answer(self, url: str) -> str:
        """The status code of `url` (the edge's HTTPS port for its host), once the edge
        answers: Caddy takes its ports and its first certificate a moment after its unit is
        active."""
        retries = ["--retry", "60", "--retry-all-errors", "--retry-delay", "1"]
        return self.run(
            "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", *retries,
            "--resolve", RESOLVE, url,
        )  # fmt: skip


@dataclass
class Clients:
    """`count` clients in the container, each sending requests one after another through the
    edge, a new connection each (so a refused connection shows), until stopped: each answer
    is a line of its file, the HTTP status and curl's exit code ("000 7" when refused,
    "000 35" when the TLS handshake failed)."""

    machine: Machine
    name: str
    url: str = THROUGH_THE_EDGE
    count: int = 4

    def files(self) -> list[str]:
        return [f"/run/drill-{self.name}-{n}" for n in range(self.count)]

    def start(self) -> None:
        for n, path in enumerate(self.files()):
            curl = (
                "curl -sk -o /dev/null --max-time 30 -w '%{http_code} %{exitcode}\\n' "
                f"--resolve {RESOLVE} {self.url}"
            )
            loop = f"while [ ! -e /run/drill-{self.name}-stop ]; do {curl} >> {path}; done"
            self.machine.run(
                "systemd-run", f"--unit=drill-{self.name}-{n}", "--collect", "sh", "-c", loop
            )
        self.machine.until(lambda: all(self.answers_of(path) for path in self.files()), "answered")

    def answers_of(self, path: str) -> list[str]:
        return self.machine.run("cat", path, check=False).splitlines()

    def answers(self) -> list[str]:
        return [line for path in self.files() for line in self.answers_of(path)]

    def tally(self) -> Counter[str]:
        return Counter(self.answers())

    def answer_again(self) -> None:
        """Return once every client has had one more answer than it had."""
        before = [len(self.answers_of(path)) for path in self.files()]
        self.machine.until(
            lambda: all(
                len(self.answers_of(p)) > n for p, n in zip(self.files(), before, strict=True)
            ),
            "answered again",
            "petstore-edge",
            "petstore-web",
        )

    def stop(self) -> Counter[str]:
        self.machine.run("touch", f"/run/drill-{self.name}-stop")
        units = [f"drill-{self.name}-{n}" for n in range(self.count)]
        self.machine.until(lambda: "active" not in self.machine.states(*units), "stopped")
        return self.tally()


def binds(tmp: Path) -> list[str]:
    """This checkout, its venv and its interpreter, at the paths the units name and the venv
    names; where one lives under /root (pyenv), a drop-in makes home directories read-only
    rather than hidden, the one change to the units as shipped."""
    venv = Path(sys.prefix).resolve()
    interpreter = Path(sys.base_prefix).resolve()
    found = [
        f"--bind-ro={ROOT}:/opt/petstore",
        f"--bind-ro={venv}",  # where /opt/petstore/.venv leads, if it is a link
        f"--bind-ro={ROOT / 'deploy' / 'systemd'}:/usr/local/lib/systemd/system",
    ]
    if not interpreter.is_relative_to("/usr"):
        found.append(f"--bind-ro={interpreter}")
    if any(path.is_relative_to(home) for path in (venv, interpreter) for home in HOMES):
        dropin = tmp / "petstore-.service.d"
        dropin.mkdir()
        (dropin / "drill.conf").write_text("[Service]\nProtectHome=read-only\n")
        found.append(f"--bind-ro={dropin}:/etc/systemd/system/petstore-.service.d")
    return found


@contextlib.contextmanager
def only_drill() -> Iterator[None]:
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pytest.fail(
                f"another drill runs on this host (it holds {LOCK}): one at a time, in one "
                "process (`make drill`) or, under xdist, with `--dist loadfile` (pytest-xdist "
                "3.8 under pytest 9.2 ignores the module's xdist_group mark)"
            )
        yield


@contextlib.contextmanager
def booted(tmp: Path) -> Iterator[Machine]:
    """The container, booted (PostgreSQL not started), halted on the way out."""
    with only_drill():
        console = tmp / "nspawn.log"
        with console.open("w") as output:
            nspawn = subprocess.Popen(  # noqa: S603 (systemd-nspawn of our own image)
                [
                    "systemd-nspawn", f"--directory={SYSTEMD_DRILL_ROOT}", "--volatile=overlay",
                    "--boot", "--register=no", "--keep-unit", "--private-network",
                    "--console=passive", *binds(tmp),
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            machine = Machine(_leader(nspawn, console))
            machine.until(
                lambda: (
                    machine.run("systemctl", "is-system-running", check=False)
                    in {"running", "degraded"}
                ),
                "finished booting",
                *EVERY_UNIT,
            )
            yield machine
        finally:
            nspawn.terminate()  # halts the container's systemd
            try:
                nspawn.wait(timeout=90)
            except subprocess.TimeoutExpired:
                nspawn.kill()
                nspawn.wait()


def _leader(nspawn: subprocess.Popen, console: Path) -> int:
    """The container's systemd once it runs, as the host sees it."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and nspawn.poll() is None:
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(nspawn.pid).children():
                if child.name() == "systemd":
                    return child.pid
        time.sleep(0.1)
    pytest.fail(f"systemd-nspawn started no container:\n{console.read_text()}")


def rollout_commands() -> str:
    """The systemctl lines of docs/operators/systemd.md's "A new release" block, as written
    (the code and the lock are this checkout already)."""
    page = (ROOT / "docs" / "operators" / "systemd.md").read_text()
    section = page.split("## A new release", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = block.replace("&&\n", "&& ").splitlines()
    return "\n".join(line for line in commands if line.startswith("systemctl"))
