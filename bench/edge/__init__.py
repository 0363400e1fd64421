"""The TLS edge, figures reported without a target: Verify to the first HTTPS answer with
the new certificate (the local CA, then Pebble, each with production's
DOMAINS_CERT_ISSUE_DELAY and with 0), and wrk through the edge against plain HTTP to the
same web processes (keep-alive, a new connection per request, a full handshake per request;
certificate lookups and CPU per request; the certificate endpoint alone).

Both run on one platform started as production starts it: petstore/Procfile's `web`, `edge`
and `worker` lines on free loopback ports and a folder of the run's own, the worker started
per scenario with its CA settings; PostgreSQL, Redis and the loopback DNS server
(devtools/devdns.py) in this process; Pebble as tests/fixtures/pebble.py starts it. How
each figure is measured is written once, in the section this package writes
(`report.section`).

The modules: `platform` (the platform's processes and Pebble), `verify` (Verify → the first
HTTPS response), `throughput` (wrk through the edge, CPU and certificate lookups) and
`report` (the run and its section of bench/results.md).

`python -m bench.edge` from the checkout (or `make bench BENCH_ARGS=--edge-only`) runs it
alone and rewrites its section of bench/results.md, always the file's last; `make bench`
runs it with the rest. Importing this package sets Django up on the benchmark's settings.
"""

from bench.environment import ENV, setup_django

setup_django(ENV)  # the models its modules import need it

from bench.edge.report import kept_section, measure, write_section  # noqa: E402

__all__ = ["kept_section", "measure", "write_section"]
