"""The TLS edge: Caddy terminates HTTPS on HTTPS_PORT and proxies to the web processes.

Caddy holds no certificate of its own. During every TLS handshake it asks a
loopback-only endpoint of ours (`get_certificate http`, domains/edge/wsgi.py),
which answers only Caddy (a secret made at each start of the edge), for the
certificate of the name the client sent (SNI), so a new certificate is
served from the next handshake on and a removed domain's from none; nothing is
pushed, reloaded or restarted. `manage.py edge` writes Caddy's configuration
(domains/edge/caddy.py) and runs it.
"""
