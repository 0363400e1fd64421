"""A small, real authoritative DNS server for development and tests (dnspython + sockets).

It answers over UDP and TCP from records held in memory: the tests set them
per case, and `manage.py devdns` loads them from zone files (one
`<zone>.zone` file per zone, re-read when they change).

Unlike a dnspython Zone, the store accepts a CNAME beside other data, because
that is exactly the broken setup the platform must recognise (an A record left
beside a CNAME). It keeps NXDOMAIN (name unknown) and NODATA (name known, no
record of that type) apart, can be told to answer SERVFAIL for a name, or to
never answer for one (the client times out), or to answer nothing at all (`silent`: a
name server of a zone that never answers, a lame delegation). Several servers, each on
its own loopback address with its own records, share one port: devtools/nameservers.py.
Given `updates` (devtools/dnsupdates.py), it takes the TXT records of one zone in RFC 2136
updates signed with TSIG, as the platform's DNS-01 writes them to a zone's primary; without,
it refuses every update.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdataset
import dns.rdatatype
import dns.rrset
from publicsuffixlist import PublicSuffixList

from devtools.dnswire import TCPServer, UDPServer, refused
from devtools.sockets import bind_udp_and_tcp
from devtools.zonefiles import read_zone_file

log = logging.getLogger(__name__)
IN = dns.rdataclass.IN
ROOT = dns.name.root
DEFAULT_TTL = 300
_MAX_CHAIN = 8


def _name(text: str | dns.name.Name) -> dns.name.Name:
    if isinstance(text, dns.name.Name):
        return text
    return dns.name.from_text(text if text.endswith(".") else text + ".")


class Records:
    """Thread-safe record store: zones (for SOA/authority) and rdatasets per name."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._zones: set[dns.name.Name] = set()
        # Each name's records as the RRsets an answer holds (copied, never built record by
        # record per answer: hashing each of a name's 400 addresses took 8 ms a question).
        self._data: dict[dns.name.Name, dict[int, dns.rrset.RRset]] = {}
        # Every name that owns data or has a descendant that does: a name outside this set
        # is NXDOMAIN, inside it NODATA (an empty non-terminal exists). A set, not a scan
        # of _data per query, so a server holding 10,000 names answers as fast as one with 3.
        self._existing: set[dns.name.Name] = set()
        self.blackholed: set[dns.name.Name] = set()
        # The latest questions asked, as (name, type) text: tests assert what was (not)
        # asked; bounded, since `make run`'s server runs for days.
        self.queries: deque[tuple[str, str]] = deque(maxlen=10_000)
        self.servfailing: set[dns.name.Name] = set()
        # Answer nothing, whatever is asked (a silent name server).
        self.silent = False
        self._psl = PublicSuffixList()

    # --- writing ------------------------------------------------------------

    def add_zone(self, origin: str) -> dns.name.Name:
        zone = _name(origin)
        with self._lock:
            if zone not in self._zones:
                self._zones.add(zone)
                soa = f"ns1.{zone} hostmaster.{zone} 1 7200 900 1209600 60"
                self._put(zone, "SOA", [soa], DEFAULT_TTL)
                self._put(zone, "NS", [f"ns1.{zone}"], DEFAULT_TTL)
        return zone

    def add(self, name: str, rdtype: str, *values: str, ttl: int = DEFAULT_TTL) -> None:
        """Add records; the zone (the registrable domain of `name`) is created if needed."""
        owner = _name(name)
        text = owner.to_text(omit_final_dot=True)
        with self._lock:
            if self._zone_of(owner) is None:
                self.add_zone(self._psl.privatesuffix(text) or text)
            self._put(owner, rdtype, list(values), ttl)

    def _put(self, owner: dns.name.Name, rdtype: str, values: list[str], ttl: int) -> None:
        kind = dns.rdatatype.from_text(rdtype)
        node = self._data.setdefault(owner, {})
        self._mark_existing(owner)
        rdataset = node.get(kind) or dns.rrset.RRset(owner, dns.rdataclass.IN, kind)
        for value in values:
            # Names in values are absolute whether or not they end with a dot, as
            # people write them ("domains.petstore.localhost").
            rdataset.add(dns.rdata.from_text(IN, kind, value, origin=ROOT, relativize=False), ttl)
        node[kind] = rdataset

    def remove(self, name: str, rdtype: str | None = None) -> None:
        owner = _name(name)
        with self._lock:
            node = self._data.get(owner, {})
            if rdtype is None:
                self._data.pop(owner, None)
                self._reindex()
            else:
                node.pop(dns.rdatatype.from_text(rdtype), None)

    def _mark_existing(self, owner: dns.name.Name) -> None:
        name = owner
        while name not in self._existing and len(name) > 1:
            self._existing.add(name)
            name = name.parent()

    def _reindex(self) -> None:
        self._existing = set()
        for owner in self._data:
            self._mark_existing(owner)

    def clear(self) -> None:
        with self._lock:
            self._zones.clear()
            self._data.clear()
            self._existing.clear()
            self.blackholed.clear()
            self.servfailing.clear()
            self.queries.clear()

    def blackhole(self, name: str) -> None:
        """Never answer queries for this name: clients time out."""
        self.blackholed.add(_name(name))

    def servfail(self, name: str) -> None:
        self.servfailing.add(_name(name))

    def load_rrsets(self, origin: str, rrsets: list[dns.rrset.RRset]) -> None:
        """A zone's records as read from its file (CNAME beside other data kept)."""
        with self._lock:
            self.add_zone(origin)
            for rrset in rrsets:
                node = self._data.setdefault(rrset.name, {})
                node.setdefault(
                    rrset.rdtype, dns.rrset.RRset(rrset.name, rrset.rdclass, rrset.rdtype)
                )
                node[rrset.rdtype].update(rrset)
                self._mark_existing(rrset.name)

    def replace_with(self, other: Records) -> None:
        with self._lock:
            self._zones, self._data = set(other._zones), dict(other._data)
            self._existing = set(other._existing)

    # --- what dynamic updates read and write (devtools/dnsupdates.py) --------

    def serves(self, zone: dns.name.Name) -> bool:
        with self._lock:
            return zone in self._zones

    def editing(self) -> AbstractContextManager[bool]:
        """Held while an update reads and writes several record sets: no answer and no
        reload of the zone files comes between."""
        return self._lock

    def rrset(self, owner: dns.name.Name, rdtype: int) -> dns.rrset.RRset | None:
        with self._lock:
            found = self._data.get(owner, {}).get(rdtype)
            return found.copy() if found is not None else None

    def set_rrset(self, owner: dns.name.Name, rdtype: int, rrset: dns.rrset.RRset | None) -> None:
        """`owner`'s records of `rdtype` replaced by `rrset`, or removed (None)."""
        with self._lock:
            if rrset is not None:
                self._data.setdefault(owner, {})[rdtype] = rrset.copy()
                self._mark_existing(owner)
                return
            node = self._data.get(owner)
            if node is not None and node.pop(rdtype, None) is not None and not node:
                del self._data[owner]
                self._reindex()  # the name may be gone, or only an empty non-terminal now

    # --- answering ----------------------------------------------------------

    def _zone_of(self, qname: dns.name.Name) -> dns.name.Name | None:
        candidates = [zone for zone in self._zones if qname.is_subdomain(zone)]
        return max(candidates, key=len, default=None)

    def answer(self, query: dns.message.Message) -> dns.message.Message | None:
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        if not query.question:
            response.set_rcode(dns.rcode.FORMERR)
            return response
        question = query.question[0]
        qname, qtype = question.name, question.rdtype
        self.queries.append((qname.to_text(omit_final_dot=True), dns.rdatatype.to_text(qtype)))
        if self.silent or qname in self.blackholed:
            return None
        if qname in self.servfailing:
            response.set_rcode(dns.rcode.SERVFAIL)
            response.flags &= ~dns.flags.AA
            return response
        with self._lock:
            self._resolve(response, qname, qtype)
        return response

    def _resolve(self, response, qname, qtype) -> None:
        for _ in range(_MAX_CHAIN):
            zone = self._zone_of(qname)
            if zone is None:
                if not response.answer:  # not ours at all: nothing is known about it
                    response.set_rcode(dns.rcode.NXDOMAIN)
                return
            node = self._data.get(qname)
            if node is None:
                if qname not in self._existing:
                    response.set_rcode(dns.rcode.NXDOMAIN)
                self._authority(response, zone)
                return
            if qtype in node:
                response.answer.append(self._rrset(qname, node[qtype]))
                return
            cname = node.get(dns.rdatatype.CNAME)
            if cname is None:
                self._authority(response, zone)  # NODATA
                return
            response.answer.append(self._rrset(qname, cname))
            qname = next(iter(cname)).target

    def _authority(self, response, zone) -> None:
        soa = self._data.get(zone, {}).get(dns.rdatatype.SOA)
        if soa is not None:
            response.authority.append(self._rrset(zone, soa))

    @staticmethod
    def _rrset(name, rrset: dns.rrset.RRset) -> dns.rrset.RRset:
        # A copy (a dict copied, nothing hashed again): a test may add to the name while
        # the answer is being written. Owned by the question's own name object, which the
        # answer's name compression then finds at once for each record.
        copied = rrset.copy()
        copied.name = name
        return copied


class TakesUpdates(Protocol):
    """What takes a server's UPDATE messages (devtools/dnsupdates.py's Updates)."""

    def answer(self, wire: bytes) -> dns.message.Message | None: ...

    def replay(self, fresh: Records) -> None: ...


class DNSServer:
    """UDP + TCP servers on one port, answering from `records` (or a zone directory)."""

    # What takes this server's updates; None: every update is refused.
    updates: TakesUpdates | None = None

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        zone_dir: Path | None = None,
        silent: bool = False,
    ) -> None:
        self.records = Records()
        self.records.silent = silent
        self.zone_dir = Path(zone_dir) if zone_dir else None
        self._zone_stamp: tuple | None = None
        self._checked_at = 0.0
        self.host = host
        udp, tcp = bind_udp_and_tcp(host, port)
        self.udp, self.tcp = UDPServer(udp), TCPServer(tcp)
        self.port: int = udp.getsockname()[1]
        for server in (self.udp, self.tcp):
            server.records_for = self._records_for
            server.answer_update = self._answer_update
        self._threads: list[threading.Thread] = []

    # Shortcuts for tests: set the records each case needs.
    def add(self, name: str, rdtype: str, *values: str, ttl: int = DEFAULT_TTL) -> None:
        self.records.add(name, rdtype, *values, ttl=ttl)

    def remove(self, name: str, rdtype: str | None = None) -> None:
        self.records.remove(name, rdtype)

    def blackhole(self, name: str) -> None:
        self.records.blackhole(name)

    def servfail(self, name: str) -> None:
        self.records.servfail(name)

    def clear(self) -> None:
        self.records.clear()

    @property
    def queries(self) -> deque[tuple[str, str]]:
        return self.records.queries

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _records_for(self) -> Records:
        if self.zone_dir is not None and time.monotonic() - self._checked_at > 1.0:
            self._checked_at = time.monotonic()
            self.reload_zones()
        return self.records

    def _answer_update(self, wire: bytes) -> dns.message.Message | None:
        if self.records.silent:
            return None
        if self.updates is None:
            return refused(wire)
        self._records_for()  # the zone files as they are now, before the update changes them
        return self.updates.answer(wire)

    def reload_zones(self) -> None:
        """Re-read the zone files when any of them changed (or one was added or removed)."""
        files = sorted(self.zone_dir.glob("*.zone")) if self.zone_dir else []
        stamp = tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)
        if stamp == self._zone_stamp:
            return
        fresh = Records()
        for path in files:
            origin = path.name[: -len(".zone")]
            try:
                fresh.load_rrsets(origin, read_zone_file(path.read_text(), origin))
            except (dns.exception.DNSException, OSError) as exc:
                log.error("devdns: skipping %s: %s", path, exc)
        with self.records.editing():  # no update comes between the replay and the swap
            if self.updates is not None:
                self.updates.replay(fresh)
            self.records.replace_with(fresh)
        self._zone_stamp = stamp
        log.info("devdns: loaded %d zone file(s) from %s", len(files), self.zone_dir)

    def start(self) -> DNSServer:
        for server in (self.udp, self.tcp):
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def answered_all(self, timeout: float = 30.0) -> None:
        """Returns once every question that reached the UDP socket before this call has
        been answered: one thread answers the datagrams in turn, so the answer to a
        question of its own comes after theirs. A test clears `queries` after this, so that
        a retry a resolver sent before the step it measures is not counted in that step."""
        question = dns.message.make_query("answered-all.invalid.", "A")
        dns.query.udp(question, self.host, port=self.port, timeout=timeout)

    def stop(self) -> None:
        for server in (self.udp, self.tcp):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def serve_forever(self) -> None:
        self.start()
        try:
            while True:
                time.sleep(3600)
        finally:
            self.stop()
