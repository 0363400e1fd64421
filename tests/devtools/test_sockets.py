"""One port for a loopback DNS server's UDP and TCP (devtools/sockets.py): with
port 0 a TCP side taken by someone else means a fresh port, with a fixed port a clear
error that names it; and free_port, which hands no port to two callers at once."""

from __future__ import annotations

import errno
import multiprocessing
import os
import socket
import time

import pytest
from django.core.management import CommandError, call_command

from devtools import sockets
from devtools.devdns import DNSServer
from devtools.sockets import PortInUseError, bind_udp_and_tcp


class _Racing:
    """The socket module as sockets.py sees it, with a rival process: each time the helper
    opens its TCP socket, the rival has just taken TCP on the port the helper's UDP socket
    got (the race the helper exists for, made to happen every time, `clashes` times)."""

    def __init__(self, clashes: int) -> None:
        self.clashes = clashes
        self.udp: socket.socket | None = None
        self.taken_ports: list[int] = []
        self.rivals: list[socket.socket] = []

    def __getattr__(self, name: str):
        return getattr(socket, name)

    def socket(self, family: int, kind: int) -> socket.socket:
        sock = socket.socket(family, kind)
        if kind == socket.SOCK_DGRAM:
            self.udp = sock
        elif self.udp is not None and len(self.taken_ports) < self.clashes:
            port = self.udp.getsockname()[1]
            rival = socket.socket(family, socket.SOCK_STREAM)
            try:
                rival.bind(("127.0.0.1", port))
                rival.listen(1)
            except OSError:
                rival.close()  # another process holds it already: the same clash
            else:
                self.rivals.append(rival)
            self.taken_ports.append(port)
        return sock

    def close(self) -> None:
        for rival in self.rivals:
            rival.close()


@pytest.fixture
def racing(monkeypatch):
    def start(clashes: int) -> _Racing:
        rival = _Racing(clashes)
        monkeypatch.setattr(sockets, "socket", rival)
        started.append(rival)
        return rival

    started: list[_Racing] = []
    yield start
    for rival in started:
        rival.close()


def _serves_both(udp: socket.socket, tcp: socket.socket) -> None:
    port = udp.getsockname()[1]
    assert tcp.getsockname()[1] == port
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # TCP listens
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.sendto(b"ping", ("127.0.0.1", port))
        udp.settimeout(2)
        assert udp.recvfrom(16)[0] == b"ping"


def test_with_port_0_a_taken_tcp_side_means_a_fresh_port(racing):
    rival = racing(clashes=2)

    udp, tcp = bind_udp_and_tcp("127.0.0.1")
    try:
        taken_ports = set(rival.taken_ports)
        assert len(taken_ports) == 2  # two ports lost to the rival, then a third one
        assert udp.getsockname()[1] not in taken_ports
        _serves_both(udp, tcp)
    finally:
        udp.close()
        tcp.close()


def test_with_port_0_the_retries_are_bounded(racing):
    racing(clashes=1000)

    with pytest.raises(PortInUseError, match="in 3 tries") as raised:
        bind_udp_and_tcp("127.0.0.1", attempts=3)

    assert raised.value.errno == errno.EADDRINUSE


def test_a_busy_fixed_port_is_a_clear_error_naming_it():
    udp, tcp = bind_udp_and_tcp("127.0.0.1")
    port = udp.getsockname()[1]
    try:
        with pytest.raises(PortInUseError, match=rf"port {port} on 127\.0\.0\.1 .*in use \(UDP\)"):
            bind_udp_and_tcp("127.0.0.1", port)
    finally:
        udp.close()
        tcp.close()


def test_a_fixed_port_taken_on_tcp_only_is_an_error_and_leaves_the_udp_side_free():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as rival:
        rival.bind(("127.0.0.1", 0))
        rival.listen(1)
        port = rival.getsockname()[1]

        with pytest.raises(PortInUseError, match=rf"port {port} .*in use \(TCP\)"):
            bind_udp_and_tcp("127.0.0.1", port)

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", port))  # the helper closed its UDP socket


def test_the_dev_dns_server_and_its_command_refuse_a_busy_port(dns_server, tmp_path):
    with pytest.raises(PortInUseError, match=f"port {dns_server.port}"):
        DNSServer("127.0.0.1", dns_server.port)

    with pytest.raises(CommandError, match=f"port {dns_server.port} .*--port"):
        call_command("devdns", "--port", str(dns_server.port), "--zones", str(tmp_path))


# --- free_port's reservations ------------------------------------------------------------


@pytest.fixture
def ports_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(sockets, "PORTS_FOLDER", tmp_path / "ports")
    return tmp_path / "ports"


def _ports(count: int, into: multiprocessing.Queue | None = None) -> list[int]:
    ports = [sockets.free_port() for _ in range(count)]
    if into is not None:
        into.put(ports)
    return ports


def test_free_port_never_gives_one_process_the_same_port_twice(ports_folder):
    # Drawn at random from 12,000 ports, 400 draws repeat one with a probability of 1 - 1e-3.
    ports = _ports(400)
    assert len(set(ports)) == 400


def test_free_port_never_gives_two_processes_the_same_port(ports_folder):
    fork = multiprocessing.get_context("fork")
    results: multiprocessing.Queue = fork.Queue()
    callers = [fork.Process(target=_ports, args=(300, results)) for _ in range(2)]
    for caller in callers:
        caller.start()
    first, second = results.get(timeout=60), results.get(timeout=60)
    for caller in callers:
        caller.join(timeout=60)
    assert not set(first) & set(second)  # about 7 shared if nothing were reserved


def test_a_reservation_is_kept_for_its_time_then_taken_over(ports_folder, monkeypatch):
    # Two ports nobody listens on (so the draws below are not passed over for that), their
    # reservations in this test's folder dropped again.
    first, second = sockets.free_port(), sockets.free_port()
    for path in ports_folder.iterdir():
        path.unlink()
    drawn = iter([first, second, first])
    monkeypatch.setattr(sockets.random, "randint", lambda low, high: next(drawn))
    assert sockets.free_port() == first
    assert sockets.free_port() == second  # first is still reserved: drawn, and passed over
    aged = time.time() - sockets.RESERVED_FOR - 1
    os.utime(ports_folder / str(first), (aged, aged))
    assert sockets.free_port() == first
    assert sorted(path.name for path in ports_folder.iterdir()) == sorted([str(first), str(second)])
