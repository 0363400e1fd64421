"""Beat behind a lock (petstore/beat.py): two `celery beat` processes, started by
Procfile.production's line as a process manager starts it, on a Redis of the test's own,
send one schedule between them; when the active one is SIGKILLed, the other takes over the
same schedule once the lock lapses, and no task is sent twice in a period."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import redis

from devtools.devserver import procfile_command
from devtools.processes import spawn, stop_group
from tests.processes import PRODUCTION_PROCFILE, OwnRedis, service_env, wait_for

SWEEP_INTERVAL = 2  # seconds: a period short enough to count many in the test
LOCK_TIMEOUT = 6  # BEAT_LOCK_TIMEOUT's smallest value: the takeover comes soon
LOCK_KEY = "petstore:beat::lock"
SENT = re.compile(r"^(\S+ \S+) INFO celery\.beat .* Sending due task (\S+) ", re.MULTILINE)


class Beat:
    """Procfile.production's `beat:` line, through a shell, its output to `beat-<name>.log`."""

    def __init__(self, env: dict[str, str], tmp_path: Path, name: str) -> None:
        self.log_path = tmp_path / f"beat-{name}.log"
        command = ["/bin/sh", "-c", "exec " + procfile_command("beat", PRODUCTION_PROCFILE)]
        env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
        self.process = spawn(command, env=env, log_path=self.log_path)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def sends(self) -> list[tuple[datetime, str]]:
        """(when, schedule entry) of each task this beat sent, in its own log's order."""
        return [
            (datetime.strptime(when, "%Y-%m-%d %H:%M:%S,%f"), entry)
            for when, entry in SENT.findall(self.log())
        ]

    def sweeps(self) -> int:
        return sum(entry == "domains-sweep" for _, entry in self.sends())

    def leads(self) -> bool:
        if self.process.poll() is not None:
            pytest.fail(f"beat exited:\n{self.log()[-3000:]}")
        return "beat: Acquired lock" in self.log()

    def waits(self) -> bool:
        return "beat: Starting..." in self.log() and not self.leads()


def _sent_by_origin(broker: redis.Redis) -> dict[str, list[str]]:
    """The tasks in the broker's queues by the process that sent them (Celery's `origin`
    header: `gen<pid>@<host>`)."""
    found = defaultdict(list)
    for queue in ("checks", "certificates", "webhooks"):
        for raw in broker.lrange(queue, 0, -1):
            headers = json.loads(raw)["headers"]
            found[headers["origin"].partition("@")[0]].append(headers["task"])
    return found


@pytest.fixture
def beats(settings, tmp_path):
    server = OwnRedis(tmp_path).start()
    env = service_env(
        settings,
        REDIS_URL=server.url(0),
        CELERY_BROKER_URL=server.url(1),
        DOMAINS_SWEEP_INTERVAL=str(SWEEP_INTERVAL),
        BEAT_LOCK_TIMEOUT=str(LOCK_TIMEOUT),
        PETSTORE_VAR_DIR=str(tmp_path),
        LOG_FORMAT="plain",
        LOG_LEVEL="INFO",
    )
    started: list[Beat] = []

    def start(name: str) -> Beat:
        started.append(Beat(env, tmp_path, name))
        return started[-1]

    try:
        yield server, start
    finally:
        for beat in started:
            stop_group(beat.process)
        server.kill()


def test_two_beats_send_one_schedule_and_the_survivor_takes_over_when_the_active_is_killed(
    beats,
):
    server, start = beats
    broker = redis.Redis(port=server.port, db=1)
    lock = redis.Redis(port=server.port, db=0)

    first = start("first")
    wait_for(first.leads, timeout=60, what="the first beat to take the lock")
    second = start("second")
    wait_for(second.waits, timeout=60, what="the second beat to start and wait")
    wait_for(lambda: first.sweeps() >= 4, timeout=60, what="the first beat to send four sweeps")

    # Both run; only the active one sends, and every message in the broker is its own.
    assert second.waits() and second.sends() == []
    assert set(_sent_by_origin(broker)) == {f"gen{first.process.pid}"}

    held_by_first = lock.get(LOCK_KEY)
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    killed_sends = first.sends()
    # The lock lapses within LOCK_TIMEOUT of the first beat's last renewal; the second tries
    # for it every LOCK_TIMEOUT / 6 seconds. The wait is longer, for a busy machine.
    wait_for(second.leads, timeout=6 * LOCK_TIMEOUT, what="the second beat to take over")
    assert lock.get(LOCK_KEY) not in (None, held_by_first)
    wait_for(lambda: second.sweeps() >= 3, timeout=60, what="the second beat to send three sweeps")
    stop_group(second.process)  # so that its log and the broker can be compared

    sent = _sent_by_origin(broker)
    assert set(sent) == {f"gen{first.process.pid}", f"gen{second.process.pid}"}
    assert len(sent[f"gen{first.process.pid}"]) == len(killed_sends)
    # Every send after the kill is the survivor's: the killed beat's log ends with the kill.
    assert len(sent[f"gen{second.process.pid}"]) == len(second.sends())

    # One schedule: each entry's sends, the two beats' together in time order, are at least its
    # period apart (a second sender would put two in one period), and the survivor went on
    # from the schedule the first one left: the entries the first had sent were not due again
    # at once.
    periods = {"domains-sweep": SWEEP_INTERVAL, "domains-dispatch-deliveries": 15}
    by_entry: dict[str, list[datetime]] = defaultdict(list)
    for when, entry in sorted(killed_sends + second.sends()):
        by_entry[entry].append(when)
    assert set(by_entry) <= set(periods), by_entry.keys()
    assert len(by_entry["domains-sweep"]) >= 7
    for entry, times in by_entry.items():
        gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
        assert all(gap >= timedelta(seconds=periods[entry] * 0.9) for gap in gaps), (entry, times)
