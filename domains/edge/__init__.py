"""The TLS edge: Caddy terminates HTTPS on HTTPS_PORT and proxies to the web processes.

During every full TLS handshake Caddy asks a loopback-only endpoint of ours (`get_certificate
http`, domains/edge/endpoint.py), which answers only Caddy (a secret made at each start of the
edge), for the certificate of the name the client sent (SNI). With EDGE_HELD_CERTIFICATES it
holds the live domains' certificates itself instead, loaded through its admin API by a thread
of `manage.py edge` whenever the rows change (domains/edge/heldcertificates.py), and asks
the endpoint for the other names. Both follow the database's edge version
(domains/edge/version.py): the endpoint keeps its answers until it moves
(domains/edge/cache.py), and the holder loads again, so a new certificate is served within a
second and a removed domain's stops within a second.
`manage.py edge` writes Caddy's configuration (domains/edge/caddy.py) and runs it.
"""
