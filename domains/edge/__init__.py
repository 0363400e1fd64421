"""The TLS edge: Caddy terminates HTTPS on HTTPS_PORT and proxies to the web processes.

Caddy holds no certificate of its own. During every TLS handshake it asks a
loopback-only endpoint of ours (`get_certificate http`, domains/edge/wsgi.py),
which answers only Caddy (a secret made at each start of the edge), for the
certificate of the name the client sent (SNI). The endpoint keeps its answers
until the database's edge version moves (domains/edge/cache.py, version.py), so a
new certificate is served within a second and a removed domain's stops within a
second; nothing is pushed, reloaded or restarted. `manage.py edge` writes Caddy's configuration
(domains/edge/caddy.py) and runs it.
"""
