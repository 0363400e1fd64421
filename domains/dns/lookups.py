"""All DNS of the platform goes through here: one dnspython resolver from settings.

It returns plain values and keeps apart the four outcomes that mean different
things to a domain owner: the name does not exist (NXDOMAIN), the name exists
without records of that type (no data), the server failed (SERVFAIL / refused)
and nobody answered in time (timeout). The last two are temporary. A fifth is ours:
the question cannot be asked at all (a name longer than DNS allows), which no
retry changes.

Every question ends in its own Lookup: one that cannot be asked, or whose asking
raises something unexpected, is that question's result, never an exception that
takes the other questions of a batch (other tenants' domains) with it.

`lookup_many()` asks many questions at once (the sweep's batches) and `lookup()` is the same
for one, so the single check and the batch share one code path. `lookup_groups()` lets a group
of questions ask more once its own answers are in (a domain whose A and AAAA answers leave its
CNAME unknown asks for it), never kept waiting by another group's answers. Every question is
resolved by dnspython's asyncio resolver, through its public API only: which answer ends a
question, when a nameserver is given up, the backoff, TCP after a truncated answer, and which
datagrams count as the reply all stay dnspython's rules, not ours. A question may also name one
server to ask directly (a zone's own name server, on DOMAINS_DNS_AUTHORITATIVE_PORT:
`_ask_directly`), once; its answer is read as the resolver's is. A group of questions whose
answers a tenant writes (the doctor's: `Group.whole` false) is asked over UDP only: an answer
that does not fit one datagram is `truncated`, never fetched again over TCP, so no tenant's
zone makes the platform read hundreds of records to use two. We only choose how many
questions wait at once; asyncio lets them wait together in one thread, so a batch of hundreds
of questions costs little more than its slowest answer (docs/decisions/domain-sweep.md).
Every call of a process asks on the process's one event loop (domains/dns/eventloop.py).

The lifetime is one clock for the call: a question gets what is left of it when its turn
comes (the wait for a turn is spent from it too), one whose turn comes after it is not asked
(`asked` false), and none outlives it, whatever a server does: a call ends within its
lifetime however many questions it holds. The clock starts when the call's first question
takes one of the process's slots: waiting behind earlier calls' questions is not a server's
slowness.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dns.asyncbackend
import dns.asyncquery
import dns.asyncresolver
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.nameserver
import dns.rcode
import dns.rdata
import dns.rdatatype
import dns.resolver
import dns.rrset
from django.conf import settings
from django.utils.translation import gettext_noop

from domains import outbound
from domains.dns import eventloop
from domains.dns.answers import (
    FENCED as FENCED,
)
from domains.dns.answers import (
    NODATA as NODATA,
)
from domains.dns.answers import (
    NXDOMAIN as NXDOMAIN,
)
from domains.dns.answers import (
    OK as OK,
)
from domains.dns.answers import (
    SERVFAIL as SERVFAIL,
)
from domains.dns.answers import (
    TEMPORARY as TEMPORARY,
)
from domains.dns.answers import (
    TIMEOUT as TIMEOUT,
)
from domains.dns.answers import (
    UNASKABLE as UNASKABLE,
)
from domains.dns.answers import (
    Lookup as Lookup,
)
from domains.dns.answers import (
    chain_end,
    negative_ttl,
    read,
)
from domains.dns.datagrams import one_datagram

log = logging.getLogger(__name__)

# Questions of one call in flight at once: enough to hide the round trips,
# few enough not to overrun a nameserver's (or our loopback server's) UDP buffer.
MAX_IN_FLIGHT = 100
# Of those, the most that groups with turns of their own (Group.in_flight: the doctor's) hold:
# the other questions of a call (the checks' own, in a batch) always have the rest.
MAX_IN_FLIGHT_OF_CAPPED_GROUPS = MAX_IN_FLIGHT // 2


def _parse_nameserver(entry: str) -> dns.nameserver.Do53Nameserver:
    """`host`, `host:port` or `[ipv6]:port`; a bare IPv6 address needs the brackets for a port."""
    entry = entry.strip()
    host, port = entry, 53
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else 53
    elif entry.count(":") == 1:
        host, raw_port = entry.split(":")
        port = int(raw_port)
    return dns.nameserver.Do53Nameserver(host, port)


def get_resolver(lifetime: float | None = None) -> dns.asyncresolver.Resolver:
    """The platform's resolver: settings' nameservers (or the system's), timeout and lifetime
    (`lifetime`, where given, instead: a deadline shorter than the sweep's).

    Built per call so a settings change (tests, reload) applies at once; it keeps
    no cache, so every check sees what the DNS says now.
    """
    entries = settings.DOMAINS_DNS_NAMESERVERS
    resolver = dns.asyncresolver.Resolver(configure=not entries)
    if entries:
        resolver.nameservers = [_parse_nameserver(entry) for entry in entries]
    resolver.timeout = settings.DOMAINS_DNS_TIMEOUT
    resolver.lifetime = settings.DOMAINS_DNS_LIFETIME if lifetime is None else lifetime
    return resolver


def lookup(name: str, rdtype: str) -> Lookup:
    """Ask one question and wait for its answer."""
    return lookup_many([(name, rdtype)])[(name, rdtype)]


# (name, type) asks the resolver; (name, type, address) asks the server at that address
# directly (_ask_directly).
Question = tuple[str, ...]


@dataclass(frozen=True)
class Group:
    """Questions asked together; once they are answered, `then` (given their answers)
    names the questions still to ask, or a Group that may ask more after them in turn,
    within what is left of the call's lifetime."""

    questions: Sequence[Question]
    then: Callable[[dict[Question, Lookup]], Iterable[Question] | Group] | None = None
    # At most this many of the group's questions (its follow-ups' too) in flight at once: a
    # group of questions a tenant chooses (the doctor's) never holds a whole batch's turns.
    in_flight: int | None = None
    # False: asked over UDP only, an answer too large for one datagram left `truncated` (a
    # question also asked `whole`, by another group, is asked once, whole). The questions
    # `then` names without a Group of their own are asked the same way.
    whole: bool = True


def lookup_many(
    questions: Iterable[Question], *, lifetime: float | None = None
) -> dict[Question, Lookup]:
    """Ask every (name, type) question at once, at most MAX_IN_FLIGHT in flight; the same
    Lookup for a question whether it is asked alone or with others. All wait together, so
    `lifetime` (default DOMAINS_DNS_LIFETIME) bounds the whole call, not each question."""
    return lookup_groups([Group(list(questions))], lifetime=lifetime)


def lookup_groups(
    groups: Iterable[Group],
    *,
    lifetime: float | None = None,
    known: Mapping[Question, Lookup] | None = None,
) -> dict[Question, Lookup]:
    """`lookup_many()` of every group's questions, and of the questions each group's `then`
    asks for after its answers; a question asked by several groups is asked once, and one
    `known` (answered by an earlier call of the same check: a zone's NS, its servers'
    addresses) is not asked again. `lifetime` bounds the whole call, every group and its
    follow-ups included, the waits for a turn too. The answers asked, and the known ones."""
    groups = [group for group in groups if group.questions]
    if not groups:
        return dict(known or {})
    resolver = get_resolver(lifetime)
    resolvers = {True: resolver, False: one_datagram(resolver)}
    return eventloop.run(_ask_all(resolvers, groups, known or {}))


# A group's own turns and the capped groups' share (none: Group.in_flight).
Turns = tuple[contextlib.AbstractAsyncContextManager[Any], ...]
# Marked: the doctor's table shows it in the reader's language (domains/dns/doctor.py).
NOT_ASKED = gettext_noop("not asked: no time was left")
TOO_LARGE = "its answer does not fit one UDP datagram"


async def _ask_all(
    resolvers: dict[bool, dns.asyncresolver.Resolver],
    groups: list[Group],
    known: Mapping[Question, Lookup],
) -> dict[Question, Lookup]:
    in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
    capped_groups = asyncio.Semaphore(MAX_IN_FLIGHT_OF_CAPPED_GROUPS)
    backend = dns.asyncbackend.get_backend("asyncio")
    # Each question once per way of asking it (whole, or in one datagram); an answer known
    # already counts as whole unless it was truncated.
    asked: dict[tuple[Question, bool], asyncio.Future[Lookup]] = {}
    loop = asyncio.get_running_loop()
    for question, answer in known.items():
        asked[(question, not answer.truncated)] = loop.create_future()
        asked[(question, not answer.truncated)].set_result(answer)
    process = eventloop.shared()
    order, lifetime = next(process.calls), resolvers[True].lifetime
    deadline: float | None = None  # set when the call's first question takes a slot

    async def ask(question: Question, turns: Turns, whole: bool) -> Lookup:
        async with turns[0], turns[1], in_flight:  # a group's turn first: no slot held waiting
            await process.slots.take(order)
            try:
                return await ask_in_slot(question, whole)
            finally:
                process.slots.give()

    async def ask_in_slot(question: Question, whole: bool) -> Lookup:
        nonlocal deadline
        name, rdtype = question[0], question[1]
        if deadline is None:
            deadline = loop.time() + lifetime
        left = deadline - loop.time()
        if left <= 0:
            return Lookup(name, rdtype, TIMEOUT, error=NOT_ASKED, asked=False)
        try:
            # dnspython gives a TCP retry after a truncated answer the whole timeout again.
            async with asyncio.timeout_at(deadline):
                if len(question) == 3:
                    return await _ask_directly(
                        backend, question[2], name, rdtype, left, whole=whole
                    )
                return await _ask(resolvers[whole], backend, name, rdtype, left)
        except TimeoutError:
            return Lookup(name, rdtype, TIMEOUT, error="the lifetime ran out")
        except Exception as exc:  # noqa: BLE001 - this question's failure, not the batch's
            # Not one of the outcomes above (a resolver bug, a reply it chokes on): the
            # question failed, for now; its neighbours in the batch go on.
            log.exception("DNS question %s %s failed unexpectedly", name, rdtype)
            return Lookup(name, rdtype, SERVFAIL, error=f"{type(exc).__name__}: {exc}")

    def answers_to(
        questions: Iterable[Question], turns: Turns, whole: bool
    ) -> list[asyncio.Future[Lookup]]:
        tasks = []
        for question in dict.fromkeys(questions):
            # A question already asked whole is not asked again in one datagram.
            key = (question, whole or (question, True) in asked)
            if key not in asked:
                asked[key] = asyncio.create_task(ask(question, turns, key[1]))
            tasks.append(asked[key])
        return tasks

    async def run(group: Group) -> None:
        free = contextlib.nullcontext()
        turns: Turns = (
            (asyncio.Semaphore(group.in_flight), capped_groups) if group.in_flight else (free, free)
        )
        while True:
            step = group.questions
            answers = await asyncio.gather(*answers_to(step, turns, group.whole))
            if group.then is None:
                return
            more = group.then(dict(zip(step, answers, strict=True)))
            group = more if isinstance(more, Group) else Group(list(more), whole=group.whole)
            if not group.questions:
                return

    await asyncio.gather(*(run(group) for group in groups))
    # A question asked both ways reads its whole answer.
    found = {question: task.result() for (question, whole), task in asked.items() if not whole}
    return found | {question: task.result() for (question, whole), task in asked.items() if whole}


# The resolver's exceptions and the outcome each one means. A timeout or a failing
# server is never read as NXDOMAIN: only the server's own NXDOMAIN answer says so.
_FAILURES: tuple[tuple[type[Exception], str], ...] = (
    (dns.resolver.NXDOMAIN, NXDOMAIN),
    (dns.resolver.NoNameservers, SERVFAIL),
    (dns.exception.Timeout, TIMEOUT),
    (dns.resolver.YXDOMAIN, SERVFAIL),
)
_CAUGHT = tuple(kind for kind, _ in _FAILURES)


async def _ask(
    resolver: dns.asyncresolver.Resolver,
    backend: dns.asyncbackend.Backend,
    name: str,
    rdtype: str,
    lifetime: float | None,
) -> Lookup:
    try:
        qname, wanted = dns.name.from_text(name), dns.rdatatype.from_text(rdtype)
    except dns.exception.DNSException as exc:
        # NameTooLong, LabelTooLong, EmptyLabel...: no server could be asked this.
        return Lookup(name, rdtype, UNASKABLE, error=f"{type(exc).__name__}: {exc}")
    try:
        answer = await resolver.resolve(
            qname,
            wanted,
            raise_on_no_answer=False,
            search=False,
            backend=backend,
            lifetime=lifetime,
        )
    except _CAUGHT as exc:
        status = next(status for kind, status in _FAILURES if isinstance(exc, kind))
        if status == NXDOMAIN:
            denial = exc.response(qname) if isinstance(exc, dns.resolver.NXDOMAIN) else None
            return Lookup(name, rdtype, NXDOMAIN, ttl=negative_ttl(denial))
        return Lookup(name, rdtype, status, error=str(exc))
    return read(answer.response, qname, wanted, name, rdtype, answer.rrset)


async def _ask_directly(
    backend: dns.asyncbackend.Backend,
    address: str,
    name: str,
    rdtype: str,
    timeout: float,
    *,
    whole: bool,
) -> Lookup:
    """Ask one server, by its address, on DOMAINS_DNS_AUTHORITATIVE_PORT, once (`whole`: over
    TCP again after a truncated answer; else a truncated answer is no answer, SERVFAIL):
    what that server itself says, which a resolver would hide by asking another. Only an
    authoritative answer counts as one: a referral or a recursive answer from a server of
    the zone is a server that does not serve it (lame).
    An address the platform's address policy refuses is not asked (FENCED)."""
    if outbound.refusal(address):
        # The seam's own fence, whatever its caller checked: a tenant's zone names the server.
        return Lookup(name, rdtype, FENCED, error="the address is not public")
    try:
        qname, wanted = dns.name.from_text(name), dns.rdatatype.from_text(rdtype)
    except dns.exception.DNSException as exc:
        return Lookup(name, rdtype, UNASKABLE, error=f"{type(exc).__name__}: {exc}")
    query = dns.message.make_query(qname, wanted)
    query.flags &= ~dns.flags.RD
    port = settings.DOMAINS_DNS_AUTHORITATIVE_PORT
    try:
        if whole:
            response, _ = await dns.asyncquery.udp_with_fallback(
                query, address, timeout=timeout, port=port, backend=backend
            )
        else:
            response = await dns.asyncquery.udp(
                query, address, timeout=timeout, port=port, backend=backend
            )
    except (dns.exception.Timeout, OSError) as exc:
        # Silent, or nothing listens there (an ICMP "port unreachable"): no answer either way.
        return Lookup(name, rdtype, TIMEOUT, error=f"{type(exc).__name__}: {exc}".strip(": "))
    except dns.exception.DNSException as exc:
        # It answered something that is no DNS answer to this question (garbage, a forgery).
        return Lookup(name, rdtype, SERVFAIL, error=f"{type(exc).__name__}: {exc}".strip(": "))
    if response.flags & dns.flags.TC:
        return Lookup(name, rdtype, SERVFAIL, error=TOO_LARGE, truncated=True)
    rcode = response.rcode()
    if rcode == dns.rcode.NXDOMAIN and response.flags & dns.flags.AA:
        return Lookup(name, rdtype, NXDOMAIN, ttl=negative_ttl(response))
    if rcode != dns.rcode.NOERROR:
        return Lookup(name, rdtype, SERVFAIL, error=dns.rcode.to_text(rcode))
    if not response.flags & dns.flags.AA:
        return Lookup(name, rdtype, SERVFAIL, error="not authoritative for the name")
    return read(response, qname, wanted, name, rdtype, chain_end(response, qname, wanted))
