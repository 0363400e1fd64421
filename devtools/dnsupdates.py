"""RFC 2136 dynamic updates for the development DNS server (devtools/devdns.py): the TXT
records of one zone, added and deleted by updates signed with one TSIG key (RFC 8945), as
the platform's DNS-01 provider sends them (domains/dns/rfc2136.py) to a zone's primary.

The signature is checked by dnspython itself (`dns.message.from_wire` with the keyring). An
update that is not signed is REFUSED; one signed with a key the server does not know, with
the wrong secret or out of time answers NOTAUTH with the TSIG error (BADKEY, BADSIG,
BADTIME), unsigned as RFC 8945 §5.3.2 has it; a zone other than this one is NOTAUTH, a
record outside the zone NOTZONE, and anything but TXT REFUSED: the server holds the
platform's challenge records, nothing else is for an update to change. Prerequisites are
not implemented (NOTIMP): the platform sends none. Every refusal changes nothing; an update
that passes is applied whole, under the records' lock, and answered signed.

What updates leave is kept apart and put back each time the zone files are read again, so
editing a zone file under `make run` does not lose a challenge a CA is about to read.
"""

from __future__ import annotations

import time

import dns.exception
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.TSIG
import dns.rrset
import dns.tsig
import dns.tsigkeyring
import dns.update

from devtools.devdns import Records
from devtools.dnswire import refused

TXT = dns.rdatatype.TXT
# The TSIG errors a request's signature gets, by what dnspython raised checking it.
TSIG_ERRORS: dict[type[Exception], int] = {
    dns.message.UnknownTSIGKey: dns.rcode.BADKEY,
    dns.tsig.BadKey: dns.rcode.BADKEY,
    dns.tsig.BadAlgorithm: dns.rcode.BADKEY,
    dns.tsig.BadSignature: dns.rcode.BADSIG,
    dns.tsig.BadTime: dns.rcode.BADTIME,
}
# Seconds of clock difference a refusal's TSIG record allows (RFC 8945 recommends 300).
FUDGE = 300


class Updates:
    """The updates one zone takes, signed with one key; `records` is what they change."""

    def __init__(
        self, records: Records, *, zone: str, key_name: str, algorithm: str, secret: str
    ) -> None:
        self.records = records
        self.zone = dns.name.from_text(zone)
        self._keyring = dns.tsigkeyring.from_text({key_name: (algorithm, secret)})
        # Each TXT record set an update changed, as it left it (None: deleted).
        self._changed: dict[dns.name.Name, dns.rrset.RRset | None] = {}

    def __repr__(self) -> str:
        # The keyring holds the secret: never in a repr.
        return f"Updates(zone={self.zone})"

    def answer(self, wire: bytes) -> dns.message.Message | None:
        """The answer to an UPDATE message's bytes, after applying it if it may be."""
        try:
            update = dns.message.from_wire(wire, keyring=self._keyring)
        except tuple(TSIG_ERRORS) as error:
            code = next(code for kind, code in TSIG_ERRORS.items() if isinstance(error, kind))
            return _tsig_refusal(wire, code)
        except dns.exception.DNSException:
            return refused(wire)
        response = dns.message.make_response(update)  # signed, when the update is
        response.set_rcode(self._apply(update) if update.had_tsig else dns.rcode.REFUSED)
        return response

    def _apply(self, update: dns.message.Message) -> dns.rcode.Rcode:
        if not isinstance(update, dns.update.UpdateMessage) or len(update.zone) != 1:
            return dns.rcode.FORMERR
        if update.zone[0].rdtype != dns.rdatatype.SOA or update.zone[0].name != self.zone:
            return dns.rcode.NOTAUTH
        if not self.records.serves(self.zone):
            return dns.rcode.NOTAUTH
        if update.prerequisite:
            return dns.rcode.NOTIMP
        for change in update.update:
            if not change.name.is_subdomain(self.zone):
                return dns.rcode.NOTZONE
            if change.rdtype != TXT:
                return dns.rcode.REFUSED
        with self.records.editing():
            after: dict[dns.name.Name, dns.rrset.RRset | None] = {}
            for change in update.update:
                current = after.get(change.name, self.records.rrset(change.name, TXT))
                after[change.name] = _changed(current, change)
            for name, rrset in after.items():
                self.records.set_rrset(name, TXT, rrset)
            self._changed.update(after)
        return dns.rcode.NOERROR

    def replay(self, fresh: Records) -> None:
        """Put what updates left into `fresh`, the zone files read again."""
        for name, rrset in self._changed.items():
            fresh.set_rrset(name, TXT, rrset)


def _changed(current: dns.rrset.RRset | None, change: dns.rrset.RRset) -> dns.rrset.RRset | None:
    """A TXT record set after one change of RFC 2136 §2.5: add these values (class IN),
    delete these values (class NONE), or delete the set (class ANY)."""
    if change.deleting == dns.rdataclass.ANY:
        return None
    rrset = dns.rrset.RRset(change.name, dns.rdataclass.IN, TXT)
    if current is not None:
        rrset.update(current)
    if change.deleting == dns.rdataclass.NONE:
        for rdata in change:
            rrset.discard(rdata)
    else:
        rrset.update(change)  # one TTL for the set: the lowest
    return rrset or None


def _tsig_refusal(wire: bytes, error: int) -> dns.message.Message | None:
    """NOTAUTH with the TSIG error, unsigned: the server cannot sign with a key it does not
    know or a signature it could not check (RFC 8945 §5.3.2)."""
    try:
        update = dns.message.from_wire(wire, keyring=False)
    except dns.exception.DNSException:
        return None
    if update.tsig is None:
        return refused(wire)
    sent = update.tsig[0]
    response = dns.message.make_response(update)
    response.set_rcode(dns.rcode.NOTAUTH)
    tsig = dns.rdtypes.ANY.TSIG.TSIG(
        dns.rdataclass.ANY,
        dns.rdatatype.TSIG,
        sent.algorithm,
        int(time.time()),
        FUDGE,
        b"",
        update.id,
        error,
        b"",
    )
    response.tsig = dns.rrset.from_rdata(update.tsig.name, 0, tsig)
    return response
