"""The development DNS server's wire: UDP and TCP servers on sockets bound beforehand
(devtools/sockets.py), which hand each query to what answers it (devtools/devdns.py's
Records) and each UPDATE message, unparsed (its signature is checked as it is read), to
what takes updates (devtools/dnsupdates.py), and send the answer back, truncated over UDP
when it does not fit; a message that gets no answer (a black-holed name, a silent server)
gets nothing back.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import struct
from collections.abc import Callable
from typing import Protocol

import dns.exception
import dns.flags
import dns.message
import dns.opcode
import dns.rcode


class Answerer(Protocol):
    def answer(self, query: dns.message.Message) -> dns.message.Message | None: ...


# The fewest bytes a message's header and each of its records take on the wire (a record:
# its owner name at least one byte, type, class, TTL and length ten).
HEADER_BYTES, RECORD_BYTES_AT_LEAST = 12, 11


def _wire(response: dns.message.Message, limit: int) -> bytes:
    records = sum(len(rrset) for rrset in (*response.answer, *response.authority))
    try:
        if HEADER_BYTES + records * RECORD_BYTES_AT_LEAST > limit:
            # Too big whatever its names compress to: not written out record by record first
            # (400 addresses took 9 ms, in the one thread that answers every datagram).
            raise dns.exception.TooBig
        return response.to_wire(max_size=limit)
    except dns.exception.TooBig:
        response.answer, response.authority, response.additional = [], [], []
        response.flags |= dns.flags.TC
        return response.to_wire()


def _parse(data: bytes) -> dns.message.Message | None:
    try:
        return dns.message.from_wire(data)
    except dns.exception.DNSException:
        return None


def is_update(wire: bytes) -> bool:
    """Whether a message's header says UPDATE (its opcode, bits 1-4 of the third byte)."""
    return len(wire) > 2 and (wire[2] >> 3) & 0x0F == dns.opcode.UPDATE


def refused(wire: bytes) -> dns.message.Message | None:
    """REFUSED, unsigned, for a message this server will not act on (None: unreadable)."""
    try:
        message = dns.message.from_wire(wire, keyring=False)
    except dns.exception.DNSException:
        return None
    response = dns.message.make_response(message)
    response.set_rcode(dns.rcode.REFUSED)
    return response


def _respond(server: UDPServer | TCPServer, data: bytes) -> dns.message.Message | None:
    if is_update(data):
        return server.answer_update(data)
    query = _parse(data)
    if query is None:
        return None
    return server.records_for().answer(query)


class _UDPHandler(socketserver.BaseRequestHandler):
    server: UDPServer

    def handle(self) -> None:
        data, sock = self.request
        response = _respond(self.server, data)
        if response is not None:
            # The size the question's EDNS allows, which make_response kept as request_payload.
            limit = max(512, response.request_payload if response.edns >= 0 else 512)
            sock.sendto(_wire(response, limit), self.client_address)


class _TCPHandler(socketserver.BaseRequestHandler):
    server: TCPServer

    def handle(self) -> None:
        conn = self.request
        conn.settimeout(10)
        try:
            while True:
                header = _recv_exactly(conn, 2)
                if header is None:
                    return
                data = _recv_exactly(conn, struct.unpack("!H", header)[0])
                response = _respond(self.server, data or b"")
                if response is None:
                    return  # unreadable, or blackholed: hang up without an answer
                wire = response.to_wire()
                conn.sendall(struct.pack("!H", len(wire)) + wire)
        except OSError:
            return


def _recv_exactly(conn: socket.socket, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = conn.recv(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class UDPServer(socketserver.UDPServer):
    """Serves on a socket bound beforehand (sockets.bind_udp_and_tcp)."""

    # One thread answers every datagram in turn: an answer comes from memory and never
    # blocks, and a thread per datagram costs more than the answer itself (the sweep
    # benchmark sends tens of thousands). A large receive buffer absorbs the bursts.
    records_for: Callable[[], Answerer]
    answer_update: Callable[[bytes], dns.message.Message | None]

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock.getsockname(), _UDPHandler, bind_and_activate=False)
        self.socket.close()  # the one socketserver made, unbound
        self.socket = sock
        with contextlib.suppress(OSError):
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 2**20)


class TCPServer(socketserver.ThreadingTCPServer):
    """Serves on a socket bound and listening beforehand (sockets.bind_udp_and_tcp)."""

    daemon_threads = True
    records_for: Callable[[], Answerer]
    answer_update: Callable[[bytes], dns.message.Message | None]

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock.getsockname(), _TCPHandler, bind_and_activate=False)
        self.socket.close()  # the one socketserver made, unbound
        self.socket = sock
