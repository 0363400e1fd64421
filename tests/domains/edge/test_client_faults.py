"""A client's fault never takes a web process out of the edge's rotation.

An anonymous client sends chunked bodies of several megabytes to the API, which refuses them
(401) before reading them; the edge's write of the rest then fails. That is the client's
doing, not a sign the web process is unwell: the other clients' requests must go on as
before, and the edge must count no failure against the process (Caddy takes a process out
of rotation by the failures it counts, domains/edge/caddy.py). Driven as the red-team drove
it (devtools/bodyflood.py): a client on one kept-alive connection, in windows without the
attacker and with it, alternated; with the edge before one web process and before two. How
much slower the client is under the attacker is a time, which a test on a shared machine
cannot bound: bench/edge_faults.py measures it and writes its figures in bench/results.md.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings

from devtools.bodyflood import Victim, compare
from tests.fixtures.plainedge import PlainEdge, plain_edge
from tests.processes import service_env, web_server_process

pytestmark = pytest.mark.django_db(transaction=True)

# Bodies a second: twice the red-team's. Anonymous requests are counted by no limit (a 401
# costs neither the key's nor the address's quota), so any rate is one "the limits allow";
# bench/edge_faults.py measures several.
RATE = 2.0


@pytest.fixture(scope="module")
def edges(django_db_setup, tmp_path_factory) -> Iterator[dict[int, PlainEdge]]:
    """Two web processes (production's line, two workers each) and two edges (production's):
    one before the first process alone, one before both. Each edge by the number of web
    processes behind it."""
    tmp_path = tmp_path_factory.mktemp("faults")
    # The victim is one client sending 40 requests a second: the API's limits would refuse it.
    env = service_env(django_settings, API_RATE_LIMIT="", API_ADDRESS_RATE_LIMIT="")
    with contextlib.ExitStack() as stack:
        webs = [
            stack.enter_context(web_server_process(env, tmp_path, workers=2, production=True))
            for _ in range(2)
        ]
        upstreams = [base.removeprefix("http://") for base, _ in webs]
        yield {
            count: stack.enter_context(
                plain_edge(upstreams[:count], tmp_path_factory.mktemp(f"edge{count}"))
            )
            for count in (1, 2)
        }


@pytest.mark.parametrize("web_processes", [1, 2])
def test_an_anonymous_client_sending_large_bodies_leaves_the_others_answered(
    edges, alice_key, web_processes
):
    edge = edges[web_processes]
    victim = Victim(
        edge.port, "/v1/pets?limit=20", {"Authorization": f"Bearer {alice_key.plaintext}"}
    )
    # What the edge counts against each web process, read throughout: a failure counted is
    # remembered for a while (Caddy's fail_duration), never less than a tenth of a second.
    counted: Counter[str] = Counter()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.1):
            counted.update(edge.failures_counted())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = compare(victim, edge.port, rate=RATE, rounds=6, seconds=0.75)
    finally:
        done.set()
        watcher.join()
        victim.close()

    assert set(result.victim) == {200}, result.victim  # no 502
    assert result.attacker[401] > 0  # it was answered, and refused
    assert len(counted) == web_processes  # every web process was read, over and over
    # None had a failure counted against it, so none was out of rotation: nobody's request
    # waited out the edge's retries for another process.
    assert set(counted.values()) == {0}, counted
