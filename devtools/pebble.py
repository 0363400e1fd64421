"""Pebble, Let's Encrypt's test ACME server (Debian's package), on loopback for the tests and
the benchmarks: its configuration and environment, written once.

Debian's package ships no certificates: a throwaway CA (devtools/tlsfiles.py) signs
its HTTPS listener's, and that CA file is what DOMAINS_ACME_CA_BUNDLE must trust. Pebble
validates HTTP-01 at `http_port` on 127.0.0.1 (a web process of ours, whose host routing
answers the challenge), after resolving the domain with `dns_address`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

PEBBLE = "/usr/bin/pebble"

# What Pebble does differently from its defaults here, and why.
ENVIRONMENT = {
    # Validate at once, not after Pebble's random sleep of up to 15 s.
    "PEBBLE_VA_NOSLEEP": "1",
    # Every order gets fresh authorizations, so each one really goes through HTTP-01.
    "PEBBLE_AUTHZREUSE": "0",
    # Pebble rejects 5% of good nonces by default; the client retries one badNonce, and
    # two in a row would make a test flaky and a measurement noisy.
    "PEBBLE_WFE_NONCEREJECT": "0",
}


@dataclass(frozen=True)
class PebbleConfig:
    port: int
    management_port: int
    tls_port: int
    http_port: int
    certificate: Path
    key: Path
    # Key id -> base64url HMAC key: when any, every new account must be bound to one (RFC
    # 8555 §7.3.4), as ZeroSSL and Google Trust Services require.
    account_bindings: Mapping[str, str] = field(default_factory=dict)

    @property
    def directory(self) -> str:
        return f"https://127.0.0.1:{self.port}/dir"

    @property
    def management(self) -> str:
        return f"https://127.0.0.1:{self.management_port}"

    def write(self, path: Path) -> Path:
        path.write_text(
            json.dumps(
                {
                    "pebble": {
                        "listenAddress": f"127.0.0.1:{self.port}",
                        "managementListenAddress": f"127.0.0.1:{self.management_port}",
                        "certificate": str(self.certificate),
                        "privateKey": str(self.key),
                        "httpPort": self.http_port,
                        "tlsPort": self.tls_port,
                        "ocspResponderURL": "",
                        "externalAccountBindingRequired": bool(self.account_bindings),
                        "externalAccountMACKeys": dict(self.account_bindings),
                    }
                }
            )
        )
        return path


def command(config_file: Path, dns_address: str) -> list[str]:
    return [PEBBLE, "-config", str(config_file), "-dnsserver", dns_address]


def environment() -> dict[str, str]:
    return {**os.environ, **ENVIRONMENT}
