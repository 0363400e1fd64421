"""Many DNS questions at once (`lookups.lookup_many`, the sweep's batches) against the real
loopback server: each gets the Lookup it gets when asked alone, whatever else is in
flight, and no more than `MAX_IN_FLIGHT` are asked at once."""

from __future__ import annotations

import asyncio
import threading

import pytest

from domains.dns import eventloop, lookups
from tests.fixtures.domains import TARGET
from tests.processes import wait_for
from tests.reliability.hostile_dns import HostileDNS

# Every kind of answer the checks tell apart.
RECORDS = [
    ("ok.example.test", "CNAME", TARGET + "."),  # a chain to the target's A and AAAA
    ("elsewhere.example.test", "CNAME", "shops.other-host.example."),
    ("a-beside.example.test", "CNAME", TARGET + "."),
    ("a-beside.example.test", "A", "203.0.113.8"),
    ("a-only.example.test", "A", "203.0.113.7"),
    ("txt-only.example.test", "TXT", '"hello"'),  # exists: no data for the others
    ("example.test", "A", "192.0.2.80"),
    ("example.test", "AAAA", "2001:db8::80"),
]
NAMES = sorted({name for name, _, _ in RECORDS}) + [
    "missing.example.test",  # NXDOMAIN
    "broken.example.test",  # SERVFAIL
]
QUESTIONS = [(name, rdtype) for name in NAMES for rdtype in ("CNAME", "A", "AAAA")]
QUESTIONS.insert(7, ("slow.example.test", "A"))  # never answered: a timeout (one lifetime)


def seen(lookup: lookups.Lookup) -> tuple:
    return lookup.name, lookup.rdtype, lookup.status, lookup.values, lookup.final


@pytest.fixture
def zone(dns_server):
    for name, rdtype, value in RECORDS:
        dns_server.add(name, rdtype, value)
    dns_server.blackhole("slow.example.test")
    dns_server.servfail("broken.example.test")
    return dns_server


@pytest.mark.parametrize("in_flight", [2, 100])
def test_asked_together_each_question_gets_what_it_gets_asked_alone(zone, monkeypatch, in_flight):
    alone = {question: seen(lookups.lookup(*question)) for question in QUESTIONS}
    monkeypatch.setattr(lookups, "MAX_IN_FLIGHT", in_flight)

    together = lookups.lookup_many(QUESTIONS + QUESTIONS[:5])  # asked twice: answered once

    assert {question: seen(found) for question, found in together.items()} == alone
    statuses = {question: found.status for question, found in together.items()}
    assert statuses[("ok.example.test", "A")] == lookups.OK
    assert together[("ok.example.test", "A")].values == ()  # reached through the CNAME
    assert together[("ok.example.test", "A")].final == ("192.0.2.80",)
    assert statuses[("a-beside.example.test", "A")] == lookups.OK
    assert statuses[("txt-only.example.test", "CNAME")] == lookups.NODATA
    assert statuses[("missing.example.test", "A")] == lookups.NXDOMAIN
    assert statuses[("slow.example.test", "A")] == lookups.TIMEOUT
    assert statuses[("broken.example.test", "AAAA")] == lookups.SERVFAIL


def test_no_more_than_max_in_flight_questions_are_asked_at_once(dns_server, settings, monkeypatch):
    hostile = HostileDNS(dns_server.address).start()
    try:
        settings.DOMAINS_DNS_NAMESERVERS = [hostile.address]
        settings.DOMAINS_DNS_TIMEOUT = settings.DOMAINS_DNS_LIFETIME = 10.0
        monkeypatch.setattr(lookups, "MAX_IN_FLIGHT", 3)
        dns_server.add("www.example.test", "CNAME", TARGET + ".")
        hostile.mode = "hold"  # the server keeps every question unanswered
        questions = [("www.example.test", rdtype) for rdtype in ("CNAME", "A", "AAAA", "TXT", "MX")]
        found = {}
        asking = threading.Thread(target=lambda: found.update(lookups.lookup_many(questions)))
        asking.start()

        wait_for(lambda: len(hostile.queries) >= 3, timeout=5, what="three questions held")
        asking.join(timeout=0.5)  # a fourth question would be asked by now
        held = len(hostile.queries)
        hostile.mode = "forward"
        asking.join(timeout=10)
    finally:
        hostile.mode = "forward"
        hostile.stop()

    assert held == 3
    assert [name for _, name in hostile.queries] == ["www.example.test."] * 5
    assert {question: found[question].status for question in questions} == {
        ("www.example.test", "CNAME"): lookups.OK,
        ("www.example.test", "A"): lookups.OK,
        ("www.example.test", "AAAA"): lookups.OK,
        ("www.example.test", "TXT"): lookups.NODATA,
        ("www.example.test", "MX"): lookups.NODATA,
    }


def test_a_caller_already_inside_an_event_loop_gets_its_answer(zone):
    """An async caller (or a browser driver's loop in this thread) still gets the answer."""

    async def ask_from_a_running_loop() -> lookups.Lookup:
        return lookups.lookup("ok.example.test", "CNAME")

    answer = asyncio.run(ask_from_a_running_loop())
    assert answer.status == lookups.OK and answer.values == (TARGET,)


# Names no DNS server can be asked: longer than 253 characters (the verification record of a
# 240-character name), a label longer than 63, an empty label.
UNASKABLE = [
    ("_petstore-verification." + ".".join(["a" * 60] * 3) + ".b" * 27 + ".example.test", "TXT"),
    ("a" * 64 + ".example.test", "A"),
    ("shop..example.test", "CNAME"),
    ("ok.example.test", "NOT-A-TYPE"),
]


def test_a_question_that_cannot_be_asked_is_its_own_permanent_result(zone):
    assert len(UNASKABLE[0][0]) > 253

    found = lookups.lookup_many(UNASKABLE + QUESTIONS)

    for question in UNASKABLE:
        assert found[question].status == lookups.UNASKABLE, question
        assert not found[question].temporary
        assert found[question].error
    # The questions asked beside them are answered as if they were alone.
    assert found[("ok.example.test", "A")].final == ("192.0.2.80",)
    assert found[("missing.example.test", "A")].status == lookups.NXDOMAIN


def test_a_question_that_raises_unexpectedly_fails_alone(zone, monkeypatch, caplog):
    # Nothing on loopback makes dnspython raise something unexpected; a resolver that does
    # for one name stands in for a bug or a reply it chokes on.
    real = lookups.dns.asyncresolver.Resolver.resolve

    async def resolve(self, qname, *args, **kwargs):
        if str(qname).startswith("elsewhere."):
            raise RuntimeError("the resolver choked")
        return await real(self, qname, *args, **kwargs)

    monkeypatch.setattr(lookups.dns.asyncresolver.Resolver, "resolve", resolve)

    found = lookups.lookup_many(QUESTIONS)

    choked = found[("elsewhere.example.test", "CNAME")]
    assert choked.status == lookups.SERVFAIL and "the resolver choked" in choked.error
    assert found[("ok.example.test", "A")].final == ("192.0.2.80",)
    assert "elsewhere.example.test CNAME failed unexpectedly" in caplog.text


def test_the_wait_for_a_turn_is_spent_from_the_lifetime(dns_server, settings, monkeypatch):
    """Nine questions to a name that is never answered, three turns: the three asked first
    hold their turns for the whole lifetime, so the other six are never sent, and the call
    ends with its lifetime instead of three lifetimes in a row."""
    settings.DOMAINS_DNS_TIMEOUT = 10.0
    monkeypatch.setattr(lookups, "MAX_IN_FLIGHT", 3)
    dns_server.blackhole("slow.example.test")
    dns_server.add("ok.example.test", "A", "192.0.2.80")
    questions = [("slow.example.test", rdtype) for rdtype in ("A", "AAAA", "TXT", "MX", "NS")]
    questions += [("slow.example.test", rdtype) for rdtype in ("CAA", "SRV", "PTR", "SOA")]

    found = lookups.lookup_many(questions, lifetime=0.5)

    assert len([q for q in dns_server.queries if q[0] == "slow.example.test"]) == 3
    assert {found[question].status for question in questions} == {lookups.TIMEOUT}
    assert [found[question].asked for question in questions] == [True] * 3 + [False] * 6
    assert found[questions[-1]].error == "not asked: no time was left"


def test_groups_with_turns_of_their_own_never_hold_the_others(dns_server, settings, monkeypatch):
    """Groups of questions someone else chooses (the domain doctor's) have `in_flight` turns
    each, and all of them together at most MAX_IN_FLIGHT_OF_CAPPED_GROUPS of the call's: two
    such groups of black-holed questions, three turns each, send two in all, and the
    questions beside them are answered on the turns left."""
    settings.DOMAINS_DNS_TIMEOUT = 10.0
    monkeypatch.setattr(lookups, "MAX_IN_FLIGHT", 3)
    monkeypatch.setattr(lookups, "MAX_IN_FLIGHT_OF_CAPPED_GROUPS", 2)
    dns_server.blackhole("slow.example.test")
    dns_server.blackhole("slower.example.test")
    dns_server.add("ok.example.test", "A", "192.0.2.80")
    dns_server.add("ok.example.test", "AAAA", "2001:db8::80")
    kinds = ("A", "AAAA", "TXT", "MX", "NS", "CAA")
    held = [
        (name, rdtype) for name in ("slow.example.test", "slower.example.test") for rdtype in kinds
    ]
    own = [("ok.example.test", "A"), ("ok.example.test", "AAAA")]

    found = lookups.lookup_groups(
        [
            lookups.Group(held[:6], in_flight=3),
            lookups.Group(held[6:], in_flight=3),
            lookups.Group(own),
        ],
        lifetime=0.5,
    )

    assert len([q for q in dns_server.queries if q[0].startswith("slow")]) == 2
    assert sum(found[question].asked for question in held) == 2
    assert [found[question].status for question in own] == [lookups.OK, lookups.OK]


def ask_in_thread(found: dict[str, lookups.Lookup], name: str, lifetime: float) -> threading.Thread:
    """`name`'s A question, from a thread of its own (a checks worker's batch), into `found`."""
    asking = threading.Thread(
        target=lambda: found.update(
            {name: lookups.lookup_many([(name, "A")], lifetime=lifetime)[(name, "A")]}
        )
    )
    asking.start()
    return asking


def let_go(hostile: HostileDNS, threads: list[threading.Thread]) -> None:
    """The held questions forwarded to the real server: their calls end."""
    hostile.mode = "forward"
    for thread in threads:
        thread.join(timeout=10)


def answers(found: dict[str, lookups.Lookup]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {name: (lookup.status, lookup.final) for name, lookup in found.items()}


def answered(names: list[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """What `answers` holds when each of `names` was answered with the address it has."""
    return {name: (lookups.OK, ("192.0.2.80",)) for name in names}


def test_calls_held_by_a_silent_server_hold_their_sockets_not_the_process(dns_server, settings):
    """Three calls, each in its own thread, whose questions a server holds: a fourth call, to
    a server that answers, is answered while they wait (they are answered once let go)."""
    hostile = HostileDNS(dns_server.address).start()
    held = [f"held{n}.example.test" for n in range(3)]
    for name in [*held, "answered.example.test"]:
        dns_server.add(name, "A", "192.0.2.80")
    found: dict[str, lookups.Lookup] = {}
    try:
        hostile.mode = "hold"
        settings.DOMAINS_DNS_NAMESERVERS = [hostile.address]
        settings.DOMAINS_DNS_TIMEOUT = 10.0
        threads = [ask_in_thread(found, name, 10.0) for name in held]
        wait_for(lambda: len(hostile.queries) >= len(held), timeout=5, what="the calls held")
        settings.DOMAINS_DNS_NAMESERVERS = [dns_server.address]
        ask_in_thread(found, "answered.example.test", 5.0).join(timeout=10)
        answered_while_held = dict(found)
        let_go(hostile, threads)
    finally:
        hostile.mode = "forward"
        hostile.stop()

    assert list(answered_while_held) == ["answered.example.test"]
    assert answers(found) == answered([*held, "answered.example.test"])


def test_a_call_waiting_for_a_slot_is_not_charged_for_the_wait(dns_server, settings, monkeypatch):
    """With every slot of the process held by calls a server holds, a later call waits for a
    slot longer than its own lifetime; its clock starts when it gets one, so once the server
    lets go it is asked and answered, not refused for want of time."""
    monkeypatch.setattr(eventloop, "PROCESS_IN_FLIGHT", 2)
    hostile = HostileDNS(dns_server.address).start()
    first = ["first1.example.test", "first2.example.test"]
    for name in [*first, "waits.example.test"]:
        dns_server.add(name, "A", "192.0.2.80")
    found: dict[str, lookups.Lookup] = {}
    try:
        settings.DOMAINS_DNS_NAMESERVERS = [hostile.address]
        settings.DOMAINS_DNS_TIMEOUT = 10.0
        hostile.mode = "hold"
        threads = [ask_in_thread(found, name, 10.0) for name in first]
        wait_for(lambda: len(hostile.queries) >= len(first), timeout=5, what="the slots held")
        threads.append(ask_in_thread(found, "waits.example.test", 1.0))
        threads[-1].join(timeout=1.5)  # longer than the waiting call's lifetime
        held = sorted(name for _, name in hostile.queries)
        let_go(hostile, threads)
    finally:
        hostile.mode = "forward"
        hostile.stop()

    assert held == sorted(f"{name}." for name in first)
    assert answers(found) == answered([*first, "waits.example.test"])


def test_a_freed_slot_goes_to_the_earliest_calls_waiting_question(monkeypatch):
    """Slots handed over in the order of the calls, not of arrival; a question cancelled while
    waiting takes none."""
    monkeypatch.setattr(eventloop, "PROCESS_IN_FLIGHT", 1)

    async def scenario() -> list[str]:
        slots, order = eventloop.Slots(), []
        await slots.take(0)

        async def waiter(name: str, call: int) -> None:
            await slots.take(call)
            order.append(name)
            slots.give()

        later = asyncio.create_task(waiter("later call", 5))
        gone = asyncio.create_task(waiter("cancelled", 1))
        earlier = asyncio.create_task(waiter("earlier call", 2))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        slots.give()
        await asyncio.gather(later, earlier)
        return [*order, f"taken {slots.taken}"]

    assert asyncio.run(scenario()) == ["earlier call", "later call", "taken 0"]


def test_a_question_cancelled_as_its_slot_came_passes_the_slot_on(monkeypatch):
    monkeypatch.setattr(eventloop, "PROCESS_IN_FLIGHT", 1)

    async def scenario() -> tuple[bool, int]:
        slots = eventloop.Slots()
        await slots.take(0)
        first = asyncio.create_task(slots.take(1))
        second = asyncio.create_task(slots.take(2))
        await asyncio.sleep(0)
        slots.give()  # to `first`, which is cancelled before it resumes
        first.cancel()
        await asyncio.wait_for(second, timeout=5)
        return first.cancelled(), slots.taken

    assert asyncio.run(scenario()) == (True, 1)


def test_a_caller_hears_when_the_loops_thread_ends_and_the_next_call_has_a_new_loop(dns_server):
    """Nothing waits for ever on a loop that stopped: the waiting call raises, and the next
    call of the process is answered on a loop of its own."""
    dns_server.add("after.example.test", "A", "192.0.2.80")
    stopped = eventloop.shared()
    outcome: list[BaseException] = []

    def wait_for_ever() -> None:
        try:
            eventloop.run(asyncio.sleep(3600))
        except RuntimeError as error:
            outcome.append(error)

    waiting = threading.Thread(target=wait_for_ever)
    waiting.start()
    stopped.loop.call_soon_threadsafe(stopped.loop.stop)
    waiting.join(timeout=30)

    assert [str(error) for error in outcome] == ["the DNS loop's thread ended before it answered"]
    after = lookups.lookup_many([("after.example.test", "A")])[("after.example.test", "A")]
    assert (after.status, after.final) == (lookups.OK, ("192.0.2.80",))
    assert eventloop.shared() is not stopped
    left = asyncio.all_tasks(stopped.loop)  # the sleep the caller gave up on
    for task in left:
        task.cancel()
    stopped.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    stopped.loop.close()
