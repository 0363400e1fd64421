"""The built-in DNS-01 provider: RFC 2136 dynamic update, signed with TSIG (RFC 8945), sent to
the zone's primary server (DOMAINS_DNS01_*), as BIND, Knot, PowerDNS and most DNS hosts take it.

Each update is one TXT value added or deleted, never the whole record set replaced: two
challenges at one name (a wildcard and its base name) do not undo each other. Updates go over
TCP (an answer too large for UDP is never a question here, and TCP makes a spoofed answer
harder). The server's refusal (its rcode, or a TSIG error such as BADKEY or BADSIG) is a
`ProviderError` naming the server, the record and the refusal; the TSIG secret is never part
of a message.
"""

from __future__ import annotations

import socket
import struct
import time

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.tsig
import dns.tsigkeyring
import dns.update
from django.conf import settings

from domains.dns.challenges import ProviderError

# TXT records of a challenge live a minute: a CA reads them once, within the order's wait.
TTL = 60
# Seconds one update waits for the server's answer.
TIMEOUT = 10.0
DEFAULT_PORT = 53
# The server's TSIG errors (RFC 8945 §5.3.2), as dnspython raises them, by their names.
TSIG_ERRORS = {
    dns.tsig.PeerBadKey: "BADKEY (the server does not know the key)",
    dns.tsig.PeerBadSignature: "BADSIG (the secret or the algorithm is not the server's)",
    dns.tsig.PeerBadTime: "BADTIME (this host's clock is too far from the server's)",
    dns.tsig.PeerBadTruncation: "BADTRUNC",
}


class Rfc2136:
    def __init__(
        self,
        *,
        server: str,
        zone: str,
        key_name: str,
        algorithm: str,
        secret: str,
    ) -> None:
        host, _, port = server.rpartition(":") if server.count(":") == 1 else (server, "", "")
        self.address = host
        self.port = int(port) if port else DEFAULT_PORT
        self.zone = zone.rstrip(".")
        self._keyring = dns.tsigkeyring.from_text({key_name: (algorithm, secret)})
        self._key_name = dns.name.from_text(key_name)

    @classmethod
    def from_settings(cls) -> Rfc2136:
        return cls(
            server=settings.DOMAINS_DNS01_SERVER,
            zone=settings.DOMAINS_DNS01_ZONE,
            key_name=settings.DOMAINS_DNS01_TSIG_KEY_NAME,
            algorithm=settings.DOMAINS_DNS01_TSIG_ALGORITHM,
            secret=settings.DOMAINS_DNS01_TSIG_SECRET,
        )

    def __repr__(self) -> str:
        # The keyring holds the secret: never in a repr, a log line or a traceback's locals.
        return f"Rfc2136(server={self.address}:{self.port}, zone={self.zone})"

    def present(self, name: str, value: str) -> None:
        update = self._update()
        update.add(self._relative(name), TTL, "TXT", f'"{value}"')
        self._send(update, f"add the TXT record {name}")

    def clean(self, name: str, value: str) -> None:
        update = self._update()
        update.delete(self._relative(name), "TXT", f'"{value}"')
        self._send(update, f"delete the TXT record {name}")

    def _update(self) -> dns.update.UpdateMessage:
        return dns.update.UpdateMessage(self.zone, keyring=self._keyring, keyname=self._key_name)

    def _relative(self, name: str) -> dns.name.Name:
        absolute = dns.name.from_text(name)
        origin = dns.name.from_text(self.zone)
        if not absolute.is_subdomain(origin):
            raise ProviderError(f"{name} is not in the DNS-01 zone {self.zone}")
        return absolute.relativize(origin)

    def _send(self, update: dns.update.UpdateMessage, what: str) -> None:
        where = f"{self.address}:{self.port}"
        try:
            wire = self._exchange(update.to_wire())
        except (dns.exception.DNSException, OSError) as error:
            raise ProviderError(
                f"The DNS server {where} did not answer the update to {what} in {self.zone}: "
                f"{type(error).__name__}: {error}".rstrip(": ")
            ) from None
        try:
            response = dns.message.from_wire(wire, keyring=update.keyring, request_mac=update.mac)
        except dns.tsig.PeerError as error:
            # The server's TSIG error, signed or not: which one is all that matters.
            said = TSIG_ERRORS.get(type(error), str(error))
            raise ProviderError(self._refused(what, said, tsig=True)) from None
        except dns.exception.DNSException:
            # An unsigned answer (a server refuses so before it looks at the key, NOTAUTH for
            # a zone it does not serve): read, not trusted, for what it refused with.
            try:
                response = dns.message.from_wire(wire)
            except dns.exception.DNSException as error:
                said = f"an unreadable answer: {error}"
                raise ProviderError(self._refused(what, said)) from None
            if response.rcode() == dns.rcode.NOERROR:
                said = "an answer without its signature"
                raise ProviderError(self._refused(what, said)) from None
        rcode = response.rcode()
        if rcode != dns.rcode.NOERROR:
            raise ProviderError(self._refused(what, dns.rcode.to_text(rcode)))

    def _refused(self, what: str, said: str, *, tsig: bool = False) -> str:
        hint = " (check DOMAINS_DNS01_TSIG_KEY_NAME, _ALGORITHM and _SECRET)" if tsig else ""
        return (
            f"The DNS server {self.address}:{self.port} refused to {what} in {self.zone}: "
            f"{said}{hint}"
        )

    def _exchange(self, wire: bytes) -> bytes:
        """Send one message over TCP and read the answer's bytes, unparsed: a refusal comes
        unsigned, and only its bytes can be read both ways (verified, else for its rcode)."""
        expiration = time.time() + TIMEOUT
        with socket.create_connection((self.address, self.port), timeout=TIMEOUT) as sock:
            dns.query.send_tcp(sock, wire, expiration)
            (length,) = struct.unpack("!H", _read(sock, 2))
            return _read(sock, length)


def _read(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError("the server closed the connection before its answer ended")
        data += chunk
    return data
