"""A hostile DNS server for fault tests: UDP and TCP on one loopback port, in front
of the real loopback server (devtools.devdns) it forwards to when it behaves.

Modes (set `server.mode`, thread-safe):
- "forward": relay to the upstream server (the honest path);
- "slow": wait `delay` seconds, then relay;
- "servfail": answer SERVFAIL;
- "garbage": answer random bytes (a wrong id: the resolver must ignore them);
- "garbage_same_id": the query's id followed by random bytes (a malformed reply);
- "truncate": answer UDP with TC set and nothing else; TCP is relayed (forcing TCP);
- "truncate_garbage": UDP truncated, TCP answers random bytes;
- "hold": say so (`held` event) and answer nothing until the mode changes;
- "spoof": first a forged answer (a CNAME to `SPOOFED`) from another port, then the
  real one (an off-path attacker racing the server: the resolver must ignore it).
Every query is recorded in `queries` as (transport, name).
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rrset

from devtools.sockets import bind_udp_and_tcp

MODES = (
    "forward",
    "slow",
    "servfail",
    "garbage",
    "garbage_same_id",
    "truncate",
    "truncate_garbage",
    "hold",
    "spoof",
)
SPOOFED = "attacker.example."


class HostileDNS:
    def __init__(self, upstream: str):
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.mode, self.delay = "forward", 0.0
        self.queries: list[tuple[str, str]] = []
        self.held = threading.Event()
        self._stop = threading.Event()
        self.udp, self.tcp = bind_udp_and_tcp("127.0.0.1")
        self.port: int = self.udp.getsockname()[1]
        for sock in (self.udp, self.tcp):
            sock.settimeout(0.2)
        self._threads = [
            threading.Thread(target=self._serve_udp, daemon=True),
            threading.Thread(target=self._serve_tcp, daemon=True),
        ]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> HostileDNS:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        self.udp.close()
        self.tcp.close()

    # --- answering -------------------------------------------------------------

    def _answer(self, data: bytes, transport: str) -> bytes | None:
        try:
            query = dns.message.from_wire(data)
        except Exception:  # noqa: BLE001 - not even a query: say nothing
            return None
        self.queries.append((transport, query.question[0].name.to_text() if query.question else ""))
        mode = self.mode
        if mode == "hold":
            self.held.set()
            while self.mode == "hold" and not self._stop.is_set():
                time.sleep(0.05)
            mode = self.mode
        if mode == "slow":
            time.sleep(self.delay)
            return self._relay(query, transport)
        if mode == "servfail":
            response = dns.message.make_response(query)
            response.set_rcode(dns.rcode.SERVFAIL)
            return response.to_wire()
        if mode == "garbage" or (mode == "truncate_garbage" and transport == "tcp"):
            return os.urandom(48)
        if mode == "garbage_same_id":
            return data[:2] + os.urandom(30)
        if mode in ("truncate", "truncate_garbage") and transport == "udp":
            response = dns.message.make_response(query)
            response.flags |= dns.flags.TC
            return response.to_wire()
        return self._relay(query, transport)

    def _relay(self, query: dns.message.Message, transport: str) -> bytes | None:
        host, port = self.upstream
        ask = dns.query.tcp if transport == "tcp" else dns.query.udp
        try:
            return ask(query, host, port=port, timeout=2).to_wire()
        except Exception:  # noqa: BLE001 - upstream trouble: no answer
            return None

    # --- transports ------------------------------------------------------------

    def _serve_udp(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.udp.recvfrom(4096)
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._udp_reply, args=(data, peer), daemon=True).start()

    def _udp_reply(self, data: bytes, peer) -> None:
        if self.mode == "spoof":
            self._spoof(data, peer)
        reply = self._answer(data, "udp")
        if reply is not None and not self._stop.is_set():
            with contextlib.suppress(OSError):
                self.udp.sendto(reply, peer)

    def _spoof(self, data: bytes, peer) -> None:
        query = dns.message.from_wire(data)
        forged = dns.message.make_response(query)
        question = query.question[0]
        forged.answer.append(dns.rrset.from_text(question.name, 300, "IN", "CNAME", SPOOFED))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
            other.sendto(forged.to_wire(), peer)

    def _serve_tcp(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._tcp_conversation, args=(conn,), daemon=True).start()

    def _tcp_conversation(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        with conn:
            try:
                header = conn.recv(2)
                if len(header) < 2:
                    return
                size = struct.unpack("!H", header)[0]
                data = b""
                while len(data) < size:
                    chunk = conn.recv(size - len(data))
                    if not chunk:
                        return
                    data += chunk
                reply = self._answer(data, "tcp")
                if reply is not None:
                    conn.sendall(struct.pack("!H", len(reply)) + reply)
            except OSError:
                return
