"""The fairness benchmark's webhook case: another tenant's delivery latency with and without a
tenant whose endpoints never answer, through the production `webhooks` worker, with the
in-flight caps as set (bench/fairness.py writes it into its section of bench/results.md) and,
run alone (`python -m bench.fairness_webhooks`, from the checkout), off as well. Target: the
attacked median within 1.5x of the quiet one (bench/fairness_platform.py's TARGET)."""

from __future__ import annotations

import os
import socket
import ssl
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.conf import settings
from django.db import connection

from bench.environment import ENV, create_database, migrate
from bench.fairness_platform import (
    DOMAIN_LIMIT,
    DOMAINS,
    FAIR_ENV,
    SPACING,
    TARGET,
    Platform,
    make_project,
)
from bench.processes import procfile_lines
from devtools.tlsfiles import throwaway_ca_files
from domains import tasks
from domains.channels import CHANNELS, deliveries_create
from domains.choices import EventType, Plan
from domains.models import Delivery, OwnerEvent
from domains.services.webhooks import endpoint_create


class _Receiver:
    """A victim's HTTPS receiver on loopback that answers 200 at once; arrival times by id."""

    def __init__(self, cert: Path, key: Path) -> None:
        arrived = self.arrived = {}

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                arrived[self.headers["webhook-id"]] = time.perf_counter()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


WEBHOOKS = CHANNELS["webhook"]


def _webhook_latency(receiver: _Receiver, project) -> float:
    """One event of the victim's: seconds from its attempt queued to its arrival."""
    made = OwnerEvent.objects.create(
        project=project, hostname="x.fair-victim.test", type=EventType.DOMAIN_FAILING
    )
    deliveries_create([made])
    [pk] = Delivery.objects.filter(event=made, channel=WEBHOOKS.name).values_list("pk", flat=True)
    started = time.perf_counter()
    tasks.deliver.apply_async((WEBHOOKS.name, pk), queue=WEBHOOKS.queue)
    while f"evt_{made.pk}" not in receiver.arrived:
        if time.perf_counter() - started > DOMAIN_LIMIT:  # recorded as the limit: a floor
            print(f"fairness: a webhook not delivered in {DOMAIN_LIMIT:.0f} s", flush=True)
            return DOMAIN_LIMIT
        time.sleep(0.005)
    time.sleep(SPACING)
    return receiver.arrived[f"evt_{made.pk}"] - started


class _Beat(threading.Thread):
    """Beat's queueing of the attacker's due attempts, every second."""

    def __init__(self, project) -> None:
        super().__init__(daemon=True)
        self.project, self.stopping = project, threading.Event()

    def run(self) -> None:
        try:
            while not self.stopping.wait(1.0):
                mine = Delivery.objects.filter(event__project=self.project)
                for pk in mine.filter(pk__in=WEBHOOKS.due()).values_list("pk", flat=True):
                    tasks.deliver.apply_async((WEBHOOKS.name, pk), queue=WEBHOOKS.queue)
        finally:
            connection.close()


def _webhook_run(platform: Platform, receiver: _Receiver, silent: list, events: int) -> tuple:
    platform.start_workers({"webhooks": procfile_lines()["webhooks"]})
    victim, _ = make_project("fair-victim", Plan.ENTERPRISE)
    attacker, _ = make_project("fair-attacker", Plan.PRO)
    failing = [EventType.DOMAIN_FAILING]
    port = receiver.server.server_address[1]
    endpoint_create(project=victim, url=f"https://hooks.fair-victim.test:{port}/", events=failing)
    for i, sock in enumerate(silent):
        platform.dns.add(f"silent-{i}.fair-attacker.test", "A", "127.0.0.1")
        url = f"https://silent-{i}.fair-attacker.test:{sock.getsockname()[1]}/"
        endpoint_create(project=attacker, url=url, events=failing)
    quiet = [_webhook_latency(receiver, victim) for _ in range(DOMAINS)]
    deliveries_create(
        OwnerEvent.objects.bulk_create(
            OwnerEvent(project=attacker, hostname=f"{i}.fair-attacker.test", type=failing[0])
            for i in range(events)
        )
    )
    beat = _Beat(attacker)
    beat.start()
    time.sleep(3)  # the attacker's attempts fill the worker's threads first
    try:
        attacked = [_webhook_latency(receiver, victim) for _ in range(DOMAINS)]
    finally:
        beat.stopping.set()
        beat.join()
        platform.stop_workers()
    print(f"webhooks: quiet {quiet} attacked {attacked}", flush=True)
    return quiet, attacked


def measure_webhooks(*, caps_off: bool = True) -> list[str]:
    """The case's lines for bench/results.md; `caps_off` adds the run without the in-flight
    caps (the victim's deliveries then wait out the attacker's: a minute or more)."""
    create_database()
    migrate(ENV)
    events = int(os.environ.get("BENCH_WEBHOOK_EVENTS", "20"))
    workdir = Path(tempfile.mkdtemp(prefix="fairness-webhooks-"))
    platform = Platform(workdir)
    settings.WEBHOOKS_ALLOW_LOOPBACK = True  # this process creates the endpoints
    settings.DOMAINS_DNS_NAMESERVERS = [platform.dns.address]
    ca, cert, key = throwaway_ca_files(workdir, ["hooks.fair-victim.test"], ca_name="Bench CA")
    receiver = _Receiver(cert, key)
    platform.dns.add("hooks.fair-victim.test", "A", "127.0.0.1")
    silent = [socket.create_server(("127.0.0.1", 0), backlog=512) for _ in range(10)]
    FAIR_ENV.update(WEBHOOKS_ALLOW_LOOPBACK="1", WEBHOOKS_CA_BUNDLE=str(ca))
    rows = []
    try:
        caps = [("on (as set)", None)] + ([("off", "9999")] if caps_off else [])
        for label, cap in caps:
            for name in ("WEBHOOKS_IN_FLIGHT_PER_HOST", "WEBHOOKS_IN_FLIGHT_PER_PROJECT"):
                if cap is None:
                    FAIR_ENV.pop(name, None)
                else:
                    FAIR_ENV[name] = cap
            quiet, attacked = _webhook_run(platform, receiver, silent, events)
            quiet_median, attacked_median = statistics.median(quiet), statistics.median(attacked)
            ratio = attacked_median / quiet_median
            rows.append(
                f"| {label} | {quiet_median:.3f} s | {attacked_median:.3f} s | "
                f"{max(attacked):.3f} s | {ratio:.2f} | {'met' if ratio <= TARGET else 'MISSED'} |"
            )
    finally:
        platform.stop()
        receiver.server.shutdown()
        for sock in silent:
            sock.close()
    return [
        f"Webhooks: another project's {DOMAINS} deliveries to a receiver that answers at once, "
        "each timed from its attempt queued to its arrival, first alone, then while a project "
        f"whose 10 endpoints accept the connection and never answer has {events} events for "
        "each queued as beat queues them, every second; Procfile.production's `webhooks` "
        f"worker, `{procfile_lines()['webhooks']}`, WEBHOOKS_TIMEOUT "
        f"{settings.WEBHOOKS_TIMEOUT:g} s.",
        "",
        "| In-flight caps | Median, quiet | Median, attacked | Max, attacked | Ratio | ≤ 1.5x |",
        "|---|---|---|---|---|---|",
        *rows,
    ]


if __name__ == "__main__":
    print("\n".join(measure_webhooks()))
