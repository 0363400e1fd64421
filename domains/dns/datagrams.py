"""A resolver whose servers are asked over UDP only: the doctor's questions, whose answers a
tenant writes, never make the platform fetch (and parse) hundreds of records again over TCP
to use two (domains/dns/lookups.py, `Group.whole`)."""

from __future__ import annotations

import copy

import dns.asyncbackend
import dns.asyncquery
import dns.asyncresolver
import dns.message
import dns.nameserver


class OneDatagram(dns.nameserver.Do53Nameserver):
    """A resolver's server asked over UDP only: a truncated answer is the answer (its TC
    flag kept), never asked again over TCP."""

    async def async_query(
        self,
        request: dns.message.QueryMessage,
        timeout: float,
        source: str | None,
        source_port: int,
        max_size: bool,
        backend: dns.asyncbackend.Backend,
        one_rr_per_rrset: bool = False,
        ignore_trailing: bool = False,
    ) -> dns.message.Message:
        return await dns.asyncquery.udp(
            request,
            self.address,
            timeout=timeout,
            port=self.port,
            source=source,
            source_port=source_port,
            raise_on_truncation=False,
            backend=backend,
            one_rr_per_rrset=one_rr_per_rrset,
            ignore_trailing=ignore_trailing,
            ignore_errors=True,
            ignore_unexpected=True,
        )


def one_datagram(resolver: dns.asyncresolver.Resolver) -> dns.asyncresolver.Resolver:
    """The same resolver, its servers asked over UDP only (OneDatagram)."""
    udp = copy.copy(resolver)
    udp.nameservers = [
        OneDatagram(server.address, server.port)
        if isinstance(server, dns.nameserver.Do53Nameserver)
        else server
        for server in resolver.nameservers
    ]
    return udp
