"""Caddy's configuration for the edge, as JSON, from the settings.

One server on HTTPS_PORT and nothing else: automatic HTTPS is off (no :80 or :443
listeners, no redirects, no certificates of Caddy's own), HTTP/3 is off (no UDP
listener), and the admin API sits on EDGE_ADMIN (a unix socket of the checkout by
default). Certificates come from the loopback endpoint (domains/edge/wsgi.py)
during each handshake; Caddy's automation policy is a catch-all with that manager
first. Where that manager has nothing (204), Caddy would go on to issue from its own
ACME issuers for whatever name a client sent; its on-demand permission asks the same
endpoint, which always refuses: only the platform, after proving a domain, issues.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from domains.edge.paths import CERTIFICATE_PATH, PERMISSION_PATH


def endpoint(path: str) -> str:
    return f"http://127.0.0.1:{settings.EDGE_CERTIFICATES_PORT}{path}"


def config(*, data_dir: Path) -> dict[str, Any]:
    proxy = {
        "handler": "reverse_proxy",
        "upstreams": [{"dial": upstream} for upstream in settings.EDGE_UPSTREAMS],
        # Caddy sets it too; said here so the web processes' trust in it is plain to see.
        "headers": {"request": {"set": {"X-Forwarded-Proto": ["https"]}}},
    }
    return {
        "admin": {"listen": settings.EDGE_ADMIN, "config": {"persist": False}},
        "logging": {"logs": {"default": {"level": "WARN"}}},
        "storage": {"module": "file_system", "root": str(data_dir)},
        "apps": {
            "http": {
                "servers": {
                    "edge": {
                        "listen": [f":{settings.HTTPS_PORT}"],
                        "protocols": ["h1", "h2"],
                        "automatic_https": {"disable": True},
                        "tls_connection_policies": [{}],
                        "routes": [{"handle": [proxy]}],
                    }
                }
            },
            "tls": {
                "automation": {
                    "policies": [
                        {"get_certificate": [{"via": "http", "url": endpoint(CERTIFICATE_PATH)}]}
                    ],
                    "on_demand": {
                        "permission": {"module": "http", "endpoint": endpoint(PERMISSION_PATH)}
                    },
                }
            },
        },
    }
