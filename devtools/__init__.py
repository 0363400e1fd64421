"""Development tooling: what `make run`, the tests and the benchmarks need and production
never does. A loopback DNS server with its zone files and starter zones, Pebble's
configuration, throwaway CAs, the socket and process helpers, `make run`'s port check and
hints, its mail inbox and webhook receiver (pages under `/dev/`: urls.py, the root URL conf
the settings pick under DEBUG), and the commands `devdns` and `loaddomainsdemo`.

A Django app installed only under DEBUG (petstore/settings/core.py) and by the tests
(tests/settings.py); the production package and image do not ship it. Nothing in
petstore/, pets/ or domains/ imports it (tests/repository/test_architecture.py).
"""
