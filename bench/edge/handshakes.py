"""What a client of the edge sees, for bench/edge_held.py: which certificate a new TLS
connection is presented, what a full handshake costs the certificate endpoint, whether a
returning client resumes its TLS session, and whether a kept-alive connection stays open."""

from __future__ import annotations

import http.client
import socket
import ssl
import statistics
import time
from dataclasses import dataclass

from cryptography import x509

from bench.edge.platform import Platform
from bench.processes import cpu_used
from domains.edge.fallback import is_fallback
from petstore.metrics.store import store

ENDPOINT = "certificate endpoint"  # its processes' CPU group (bench/edge/platform.py)
LOOKUPS = "petstore_edge_certificate_lookups_total"
LOOKUP_SECONDS = "petstore_edge_certificate_lookup_seconds_sum"
# The platform's processes push their counts every this many seconds (METRICS_FLUSH_INTERVAL).
FLUSH_EVERY = 0.5


def client_context() -> ssl.SSLContext:
    """A client that takes any certificate: the bench reads what it was presented. Without
    the system's CAs, whose loading would take longer than the handshake it times."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def connect(port: int, name: str, context: ssl.SSLContext | None = None,
            session: ssl.SSLSession | None = None) -> ssl.SSLSocket:  # fmt: skip
    """A new TCP and TLS connection to the edge with `name` as SNI."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        return (context or client_context()).wrap_socket(raw, server_hostname=name, session=session)
    except BaseException:
        raw.close()
        raise


def presents_placeholder(port: int, name: str) -> bool:
    with connect(port, name) as tls:
        der = tls.getpeercert(binary_form=True)
    return der is not None and is_fallback(x509.load_der_x509_certificate(der))


def get(tls: ssl.SSLSocket, name: str) -> bool:
    """GET / on this connection; whether it was answered and the connection stays open."""
    try:
        tls.sendall(f"GET / HTTP/1.1\r\nHost: {name}\r\nUser-Agent: edge_held\r\n\r\n".encode())
        response = http.client.HTTPResponse(tls)  # type: ignore[arg-type]
        response.begin()
        response.read()
    except (OSError, http.client.HTTPException):
        return False
    return not response.will_close


class KeptConnection:
    """Another tenant's client: one kept-alive connection, idle between requests. `closed`
    counts the times the edge closed it (each time a new one is opened, as clients do)."""

    def __init__(self, port: int, name: str) -> None:
        self.port, self.name, self.closed = port, name, 0
        self.tls = connect(port, name)
        if not get(self.tls, name):
            raise SystemExit(f"edge_held: {name} is not answered on a kept connection")

    def still_open(self) -> bool:
        """A request on the connection: answered on it, or the edge had closed it."""
        if get(self.tls, self.name):
            return True
        self.closed += 1
        self.tls.close()
        self.tls = connect(self.port, self.name)
        return False

    def close(self) -> None:
        self.tls.close()


# --- What a full handshake costs the endpoint ------------------------------------------


def endpoint_counts() -> tuple[float, float]:
    """The endpoint's lookups so far and the seconds spent in them, all its processes."""
    time.sleep(2 * FLUSH_EVERY)  # what the processes counted last is pushed
    totals = store().totals()
    lookups = sum(v for (name, _), v in totals.items() if name == LOOKUPS)
    seconds = sum(v for (name, _), v in totals.items() if name == LOOKUP_SECONDS)
    return lookups, seconds


@dataclass(frozen=True)
class HandshakeCost:
    handshakes: int
    lookups: float  # the endpoint asked, per handshake
    endpoint_cpu_ms: float  # the endpoint's processes' CPU, per handshake
    lookup_ms: float  # the endpoint's own time per lookup (its histogram)
    handshake_ms: float  # median, as the client sees it (TCP and TLS)

    def __str__(self) -> str:
        return (
            f"{self.handshakes} full handshakes: {self.lookups:.2f} endpoint lookups each, "
            f"endpoint CPU {self.endpoint_cpu_ms:.2f} "
            f"ms and its own time {self.lookup_ms:.2f} ms per lookup, handshake median "
            f"{self.handshake_ms:.1f} ms"
        )


def full_handshakes(platform: Platform, names: list[str]) -> HandshakeCost:
    """A new connection without a session to resume for each name, one after another."""
    lookups, seconds = endpoint_counts()
    cpu = platform.cpu_seconds()
    timings = []
    for name in names:
        started = time.perf_counter()
        with connect(platform.https_port, name):
            timings.append(time.perf_counter() - started)
    cpu_after = platform.cpu_seconds()
    lookups_after, seconds_after = endpoint_counts()
    asked = lookups_after - lookups
    return HandshakeCost(
        handshakes=len(names),
        lookups=asked / len(names),
        endpoint_cpu_ms=cpu_used(cpu, cpu_after).get(ENDPOINT, 0.0) * 1000 / len(names),
        lookup_ms=(seconds_after - seconds) * 1000 / asked if asked else 0.0,
        handshake_ms=statistics.median(timings) * 1000,
    )


def resumption(port: int, name: str, times: int) -> tuple[int, float]:
    """A returning client: one full handshake and a request (which brings its TLS 1.3
    session ticket), then `times` new connections offering that session. How many resumed
    it, and the endpoint's lookups they made."""
    context = client_context()
    with connect(port, name, context) as first:
        get(first, name)
        session = first.session
    lookups, _ = endpoint_counts()
    resumed = 0
    for _ in range(times):
        with connect(port, name, context, session) as tls:
            get(tls, name)  # a ticket for the next connection too
            resumed += tls.session_reused
            session = tls.session or session
    lookups_after, _ = endpoint_counts()
    return resumed, lookups_after - lookups
