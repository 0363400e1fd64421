"""Throwaway certificate authorities for development, the tests and the benchmarks: a CA and
a server certificate it signs (Pebble's HTTPS listener, an operator's platform certificate,
a webhook receiver), made by trustme."""

from __future__ import annotations

from pathlib import Path

import trustme


def throwaway_ca_files(folder: Path, names: list[str], *, ca_name: str) -> tuple[Path, Path, Path]:
    """ca.pem, cert.pem and key.pem in `folder`: a CA called `ca_name` and a certificate it
    signs for `names` (host names, wildcards or IP addresses), its common name the first."""
    ca = trustme.CA(organization_name=ca_name)
    server = ca.issue_cert(*names, common_name=names[0])
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    ca.cert_pem.write_to_path(str(paths[0]))
    server.cert_chain_pems[0].write_to_path(str(paths[1]))
    server.private_key_pem.write_to_path(str(paths[2]))
    return paths
