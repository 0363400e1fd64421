"""Knot DNS run as a process of our own (devtools/knot.py): the tests' DNS-01 primary and the
sweep benchmark's zone. `start()` returns once every zone is served, a large one too, and a
zone that does not load fails it with Knot's own words."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.query
import dns.rcode
import pytest

from devtools.knot import KnotServer, Zone

pytestmark = pytest.mark.knot

NAMES = 20_000


def _ask(server: KnotServer, name: str, rdtype: str) -> dns.message.Message:
    query = dns.message.make_query(name, rdtype)
    return dns.query.udp(query, "127.0.0.1", port=server.port, timeout=2)


def test_every_zone_answers_authoritatively_as_soon_as_start_returns(tmp_path):
    large = "".join(f"d{i} CNAME target.other.test.\n" for i in range(NAMES))
    server = KnotServer(tmp_path, udp_workers=2)
    try:
        server.start([Zone("bench.test", large), Zone("other.test", "target A 192.0.2.80\n")])
        last = _ask(server, f"d{NAMES - 1}.bench.test", "A")
        target = _ask(server, "target.other.test", "A")
        missing = _ask(server, "nothing.bench.test", "A")
    finally:
        server.stop()
    assert last.rcode() == dns.rcode.NOERROR and last.flags & dns.flags.AA
    assert [rrset.to_text() for rrset in last.answer] == [
        f"d{NAMES - 1}.bench.test. 60 IN CNAME target.other.test."
    ]
    assert [rrset.to_text() for rrset in target.answer] == ["target.other.test. 60 IN A 192.0.2.80"]
    assert missing.rcode() == dns.rcode.NXDOMAIN and missing.flags & dns.flags.AA
    assert server.process is not None and server.process.returncode is not None


def test_a_zone_knot_cannot_load_fails_start_naming_it_and_the_server_is_stopped(tmp_path):
    server = KnotServer(tmp_path)
    with pytest.raises(RuntimeError, match=r"knotd did not serve broken\.test") as failed:
        server.start(
            [Zone("good.test", "www A 192.0.2.1\n"), Zone("broken.test", "www A not-an-address\n")],
            timeout=3,
        )
    assert "[broken.test.]" in server.log()
    assert server.log() in str(failed.value)
    assert server.process is not None and server.process.returncode is not None
