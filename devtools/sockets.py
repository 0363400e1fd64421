"""One port for both transports of a loopback DNS server: a UDP socket and a listening
TCP socket bound to the same port, as a resolver expects (it asks again over TCP, on
the same port, after a truncated UDP answer).

The kernel picks a free UDP port for port 0, but nothing reserves the TCP side of it:
another process (often an outgoing connection that was given the same number) may hold
it. So with port 0 a clash closes both sockets and starts again on a fresh port, a
bounded number of times. With a fixed port there is nothing to retry: the error names
the port and the side that is taken.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import tempfile
import time
import uuid
from pathlib import Path

# Fresh ports tried with port 0 before giving up; a clash is rare, twenty in a row is
# a machine out of ports.
ATTEMPTS = 20
# Below Linux's ephemeral range (32768-60999): a port the kernel picked for us could be taken
# by any outgoing connection before the server that is to listen on it starts.
PORT_RANGE = (20000, 32000)
# free_port's reservations: long enough for a test to start its server on the port (or to
# start it again after killing it), short enough that the range never runs out.
PORTS_FOLDER = Path(tempfile.gettempdir()) / "petstore-ports"
RESERVED_FOR = 300


class PortInUseError(OSError):
    """The port (or, with port 0, every port tried) is taken on UDP or TCP."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EADDRINUSE, message)


def bind_udp_and_tcp(
    host: str, port: int = 0, *, backlog: int = 16, attempts: int = ATTEMPTS
) -> tuple[socket.socket, socket.socket]:
    """A bound UDP socket and a listening TCP socket on the same port of `host`.

    Port 0 means any free port (read it from either socket's `getsockname()`).
    Raises PortInUseError when the port is taken, or with port 0 when `attempts`
    fresh ports in a row were taken on the TCP side.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(attempts if port == 0 else 1):
        udp = _bound(family, socket.SOCK_DGRAM, host, port)
        chosen = udp.getsockname()[1]
        try:
            tcp = _bound(family, socket.SOCK_STREAM, host, chosen, backlog=backlog)
        except PortInUseError:
            udp.close()
            if port:
                raise
            continue
        except BaseException:
            udp.close()
            raise
        return udp, tcp
    raise PortInUseError(f"no port on {host} was free for both UDP and TCP in {attempts} tries")


def _bound(
    family: socket.AddressFamily, kind: socket.SocketKind, host: str, port: int, *, backlog: int = 0
) -> socket.socket:
    """A socket bound to (host, port), listening if it is TCP; PortInUseError if taken."""
    sock = socket.socket(family, kind)
    try:
        if kind == socket.SOCK_STREAM:
            # A server restarted on its fixed port must not wait out its old connections'
            # TIME_WAIT. (UDP has none, and there the option would let two servers share
            # a port without an error.)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        if kind == socket.SOCK_STREAM:
            # On Linux two sockets with SO_REUSEADDR may both bind a port; only one can
            # listen, so listening is part of taking the port.
            sock.listen(backlog)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            side = "TCP" if kind == socket.SOCK_STREAM else "UDP"
            raise PortInUseError(f"port {port} on {host} is already in use ({side})") from exc
        raise
    return sock


def tcp_port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on (host, port): a server has started."""
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def free_port() -> int:
    """A TCP port nobody listens on (every interface), for a server started next (by a test,
    a benchmark): one of PORT_RANGE, free when asked and reserved for RESERVED_FOR seconds.

    Free when asked is not enough: between the answer and the server's bind, a second call
    (in this process, for the same server's next port, or in another test process) could be
    given the same number. The reservation is a file per port in PORTS_FOLDER, made with
    O_EXCL, so no two callers on the machine hold the same port at once."""
    PORTS_FOLDER.mkdir(exist_ok=True)
    while True:
        port = random.randint(*PORT_RANGE)  # noqa: S311 (not a secret)
        with socket.socket() as sock:
            try:
                sock.bind(("0.0.0.0", port))  # noqa: S104 (only to see that it is free)
            except OSError:
                continue
        if _reserved(port):
            return port


def _reserved(port: int) -> bool:
    """Whether this call now holds `port`'s reservation: made afresh, or taken over from a
    reservation older than RESERVED_FOR (renamed first, so only one caller takes it over)."""
    path = PORTS_FOLDER / str(port)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        pass
    try:
        if time.time() - path.stat().st_mtime < RESERVED_FOR:
            return False
        stale = path.with_name(f"{port}.{os.getpid()}.{uuid.uuid4().hex}")
        path.rename(stale)
    except FileNotFoundError:  # another caller took it over first
        return False
    stale.unlink()
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # made afresh by a caller that came between
        return False
    return True
