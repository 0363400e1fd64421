"""`make run` on a laptop asks for no more processes and threads than its cores carry:
granian warns of more web workers than cores, and of more threads than two a core and one
more, which the edge's certificate endpoint asked for on two cores."""

from __future__ import annotations

import pytest

from devtools.devserver import processes_environment
from domains.edge.processes import endpoint_command


def _after(command: list[str], flag: str) -> int:
    return int(command[command.index(flag) + 1])


def test_make_runs_web_workers_are_one_a_core_unless_the_environment_says():
    assert processes_environment({"PATH": "/usr/bin"}, cores=2)["WEB_CONCURRENCY"] == "2"
    chosen = processes_environment({"WEB_CONCURRENCY": "5"}, cores=2)
    assert chosen["WEB_CONCURRENCY"] == "5"


@pytest.mark.parametrize("cores", [1, 2, 4, 16])
def test_the_edges_endpoint_stays_within_what_granian_calls_the_machines_share(cores):
    command = endpoint_command(cores)
    workers, threads = _after(command, "--workers"), _after(command, "--blocking-threads")
    assert 1 <= workers <= min(2, cores)
    assert 1 <= threads <= min(8, 2 * cores + 1)
