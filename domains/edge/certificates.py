"""Which certificate the edge serves for a name a client sent in its TLS handshake (SNI).

The same rule as serving over HTTP (domains/routing/resolver.py): a live domain
whose certificate is issued (`active`) and currently valid, read from the rows
as they are now, so the next handshake after Remove, a stop or a renewal sees it.
"""

from __future__ import annotations

from domains.choices import State
from domains.dns import hostnames
from domains.models import Certificate
from domains.pki import keys


def served_certificate(server_name: str) -> Certificate | None:
    """The certificate to present for `server_name`, or None: no such live domain."""
    # SNI carries the ASCII (A-label) form, as domains are stored; a trailing dot is the
    # same name.
    hostname = hostnames.comparable(server_name)
    if not hostname:
        return None
    return (
        Certificate.objects.served()
        .filter(domain__hostname=hostname, domain__state=State.ACTIVE)
        .only("pem", "key_pem")
        .first()
    )


def pem_bundle(certificate: Certificate) -> bytes:
    """The chain (leaf first) and the private key, in clear, as Caddy reads them."""
    return (certificate.pem.rstrip("\n") + "\n" + keys.unseal(certificate.key_pem)).encode()
