"""How long the edge takes to load the certificates Caddy holds, and from a Remove to the
removed domain's certificate no longer served, with 1,000 (the default), 2,000 and 10,000
live domains.

For each size: that many active domains with certificates of their own (rows made directly,
each a new key and a certificate naming the domain alone), the web process and the edge as
petstore/Procfile runs them (EDGE_HELD_CERTIFICATES = the size), then REMOVES domains removed
one after another through `domain_remove`, each while a probe opens a new TLS connection to
the edge every 10 ms with that name as SNI: the time from the Remove's commit until the
probe is presented the placeholder. The load times are the edge's own log lines ("Caddy
holds N certificates (loaded in X ms)").

    python bench/edge_held.py [SIZE ...]

Prints the figures; docs/decisions/edge.md quotes them.
"""

from __future__ import annotations

import re
import shutil
import socket
import ssl
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.environment import ENV, create_database, exclusive, migrate, setup_django  # noqa: E402

setup_django(ENV)  # the models below need it

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.edge.platform import Platform  # noqa: E402
from bench.edge.verify import SLUG, ZONE, fresh_project  # noqa: E402
from domains.choices import CertState, CheckCode, State  # noqa: E402
from domains.edge.fallback import is_fallback  # noqa: E402
from domains.models import Certificate, Domain  # noqa: E402
from domains.pki import sealing  # noqa: E402
from domains.services.custom_domains import domain_remove  # noqa: E402

SIZES = (1_000, 2_000, 10_000)
REMOVES = 5
PROBE_EVERY = 0.01
ISSUER = "edge_held bench CA"
LOADED = re.compile(r"Caddy holds (\d+) certificates \(loaded in (\d+) ms\)")


def make_domains(size: int) -> list[str]:
    """`size` active domains of the bench project, each with its own certificate."""
    project, _ = fresh_project()
    now = timezone.now()
    names = [f"held-{i:05d}.{ZONE}" for i in range(size)]
    domains = Domain.objects.bulk_create(
        Domain(project=project, hostname=name, state=State.ACTIVE, cert_state=CertState.ISSUED,
               verified_at=now, checked_at=now, check_code=CheckCode.OK)
        for name in names
    )  # fmt: skip
    issuer_key = ec.generate_private_key(ec.SECP256R1())
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
    rows = []
    for domain in domains:
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (
            x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(days=90))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(domain.hostname)]),
                           critical=False)
            .sign(issuer_key, hashes.SHA256())
        )  # fmt: skip
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        rows.append(
            Certificate(
                domain=domain, serial=format(certificate.serial_number, "x"),
                not_before=now - timedelta(hours=1), not_after=now + timedelta(days=90),
                san=domain.hostname, issuer=ISSUER, renew_after=now + timedelta(days=60),
                pem=certificate.public_bytes(serialization.Encoding.PEM).decode(),
                key_pem=sealing.seal(key_pem),
            )
        )  # fmt: skip
    Certificate.objects.bulk_create(rows, batch_size=1000)
    # What autovacuum does after such a bulk insert, in its own time: without it the planner
    # still counts the tables as nearly empty and reads the live certificates in a second.
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Domain._meta.db_table}, {Certificate._meta.db_table}")
    return names


def presents_placeholder(port: int, name: str) -> bool:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=name) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    return der is not None and is_fallback(x509.load_der_x509_certificate(der))


def loads(log: Path) -> list[tuple[int, int]]:
    return [(int(n), int(ms)) for n, ms in LOADED.findall(log.read_text(errors="replace"))]


def measure(size: int) -> None:
    names = make_domains(size)
    owner = get_user_model().objects.get(username=SLUG)
    workdir = Path(tempfile.mkdtemp(prefix="edge-held-"))
    # The edge's INFO lines say how long each load took.
    ENV.update(EDGE_HELD_CERTIFICATES=str(size), LOG_LEVEL="INFO")
    platform = Platform.start(workdir)
    log = platform.log_path("edge")
    try:
        deadline = time.monotonic() + 120
        while not any(n == size for n, _ in loads(log)):
            if time.monotonic() > deadline:
                raise SystemExit(f"edge_held: Caddy never held {size}:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        gone = []
        for name in names[:: len(names) // REMOVES][:REMOVES]:
            assert not presents_placeholder(platform.https_port, name), name
            domain_remove(domain=Domain.objects.get(hostname=name), actor=owner)
            removed = time.monotonic()
            while not presents_placeholder(platform.https_port, name):
                time.sleep(PROBE_EVERY)
            gone.append(time.monotonic() - removed)
            time.sleep(1.5)  # the next Remove on a settled edge
        times = [ms for _, ms in loads(log)]
        print(
            f"edge_held: {size:,} held: first load {times[0]} ms, later loads median "
            f"{statistics.median(times[1:]):.0f} ms (max {max(times[1:])}); Remove → placeholder "
            f"median {statistics.median(gone) * 1000:.0f} ms, max {max(gone) * 1000:.0f} ms "
            f"({len(gone)} Removes)",
            flush=True,
        )
    finally:
        platform.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or list(SIZES)
    create_database()
    with exclusive(ENV):
        migrate(ENV)
        for size in sizes:
            measure(size)


if __name__ == "__main__":
    main()
