"""What one client's fault costs the others, through the edge: an anonymous client sending
large chunked bodies to the API, and a client timing its own requests meanwhile.

The attacker is one that stalls an edge for everyone when the edge waits on it: a chunked
POST of several megabytes to a `/v1` path without a key, on a connection of its own, at a
steady rate. The web process answers it before reading the body (401), so the edge's write
of the rest fails; what matters is that nobody else notices. The victim keeps one connection
to the edge and sends its requests one after the other, as an API client does; its latencies
are taken in windows that alternate between no attacker and the attacker, so that a machine
whose load drifts (other work on the same cores) weighs on both alike.

Used by tests/domains/edge/test_client_faults.py and bench/edge_faults.py.
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

# The attacker's body: about 5 MB, far past what the app accepts (64 KiB) and what the web
# process reads to keep a connection (petstore/http/earlyanswers.py, 256 KiB).
BODY_SIZE = 5 * 1024 * 1024
CHUNK = 64 * 1024


def send_large_body(port: int, *, path: str = "/v1/pets", size: int = BODY_SIZE) -> int | None:
    """One chunked POST of `size` bytes without a key, on a connection of its own: the status
    it was answered, or None when the connection ended before any answer."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    chunk = f"{CHUNK:x}\r\n".encode() + b" " * CHUNK + b"\r\n"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(head)
            try:
                for _ in range(size // CHUNK):
                    raw.sendall(chunk)
                raw.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # answered and closed before the body ended, as it may be: read the answer
            status_line = raw.recv(4096).split(b"\r\n", 1)[0]
    except OSError:
        return None
    parts = status_line.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def attack(port: int, rate: float, seconds: float) -> Counter[int | None]:
    """`send_large_body` `rate` times a second for `seconds` (one after the other, so never
    faster): what it was answered, by count."""
    answers: Counter[int | None] = Counter()
    until = time.time() + seconds
    while (started := time.time()) < until:
        answers[send_large_body(port)] += 1
        time.sleep(max(0.0, min(started + 1 / rate, until) - time.time()))
    return answers


def attack_windows(port: int, rate: float, start: float, rounds: int, seconds: float) -> Counter:
    """From `start` (the wall clock, which the victim's process shares): `rounds` pairs of a
    window of `seconds` without attacking, then one attacking."""
    answers: Counter[int | None] = Counter()
    for round_ in range(rounds):
        attacked_from = start + (2 * round_ + 1) * seconds
        time.sleep(max(0.0, attacked_from - time.time()))
        answers.update(attack(port, rate, attacked_from + seconds - time.time()))
    return answers


class Attacker:
    """`attack_windows` in a process of its own (`python -m devtools.bodyflood ...`), so that
    neither its interpreter's lock nor its sending is the victim's; it starts before `start`,
    so its own start-up falls in no window."""

    def __init__(self, port: int, rate: float, start: float, rounds: int, seconds: float):
        arguments = [port, rate, start, rounds, seconds]
        command = [sys.executable, "-m", "devtools.bodyflood", *map(str, arguments)]
        # This interpreter, on this module.
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # noqa: S603

    def answers(self) -> Counter[int | None]:
        """Once its windows are over: what it was answered (None: the connection ended first)."""
        out, _ = self.process.communicate(timeout=120)
        counts = json.loads(out).items()
        return Counter({None if key == "none" else int(key): n for key, n in counts})


@dataclass
class Victim:
    """A client with one kept-alive connection to the edge sending `rate` requests a second on
    a schedule. A request's latency counts from when it was due, not from when it was sent: a
    stall that holds the client's earlier request counts for every request it delayed, not
    once (no coordinated omission)."""

    port: int
    path: str
    headers: dict[str, str]
    rate: float = 40.0
    statuses: Counter[int] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def requests(self, start: float, seconds: float) -> list[tuple[float, float]]:
        """The requests due from `start` (the wall clock) for `seconds`: each one's time due,
        from `start`, and its latency, in milliseconds."""
        timed = []
        for due in (start + i / self.rate for i in range(int(seconds * self.rate))):
            time.sleep(max(0.0, due - time.time()))
            self.connection.request("GET", self.path, headers={"Host": "localhost", **self.headers})
            response = self.connection.getresponse()
            response.read()
            timed.append((due - start, (time.time() - due) * 1000))
            self.statuses[response.status] += 1
        return timed

    def close(self) -> None:
        self.connection.close()


def p90(samples: list[float]) -> float:
    """The 90th percentile, nearest rank."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


@dataclass
class Comparison:
    quiet: list[float]
    attacked: list[float]
    attacker: Counter[int | None]
    victim: Counter[int]

    @property
    def ratio(self) -> float:
        return p90(self.attacked) / p90(self.quiet)


def compare(victim: Victim, port: int, *, rate: float, rounds: int, seconds: float) -> Comparison:
    """`rounds` pairs of windows of `seconds`: the victim alone, then with an attacker sending
    `rate` bodies a second. The victim sends throughout, and warms up (connections, the first
    pages) while the attacker's process starts."""
    start = time.time() + 1.0
    attacker = Attacker(port, rate, start, rounds, seconds)
    victim.requests(time.time(), start - time.time())
    quiet: list[float] = []
    attacked: list[float] = []
    for due, latency in victim.requests(start, 2 * rounds * seconds):
        (attacked if int(due // seconds) % 2 else quiet).append(latency)
    return Comparison(quiet, attacked, attacker.answers(), victim.statuses)


if __name__ == "__main__":
    port, rate, start, rounds, seconds = sys.argv[1:6]
    counts = attack_windows(int(port), float(rate), float(start), int(rounds), float(seconds))
    print(json.dumps({str(key).lower(): n for key, n in counts.items()}))  # noqa: T201
