"""The edge at 1,000, 10,000 and 100,000 live domains: from a Remove to the removed domain's
certificate no longer served, another tenant's kept-alive connections across the Removes,
what a full handshake costs the certificate endpoint at that size, what the endpoint's
cache holds in memory, and whether a returning client resumes its TLS session. The edge as
configured by default (EDGE_HELD_CERTIFICATES=0: Caddy holds nothing and asks the endpoint
in each full handshake), or with `--held` holding them all (EDGE_HELD_CERTIFICATES = the
size).

For each size: that many active domains of one project with certificates naming each its
domain alone (rows made directly; one key for all, which the edge's rules allow, so the
seeding takes seconds), KEPT active domains of another project, the web process and the
edge as petstore/Procfile runs them. One kept-alive connection per name of the other
project, each answered once and then idle; then REMOVES domains removed one after another
through `domain_remove`, each while a probe opens a new TLS connection to the edge every
10 ms with that name as SNI: the time from the Remove's commit until the probe is presented
the placeholder. A request on each kept connection after each Remove says whether the edge
closed it meanwhile. Then HANDSHAKES full handshakes for other names, twice (the first
after the Removes moved the edge version: each a read of the rows; the second answered by
the endpoint's cache), counted by the endpoint's own metrics, its processes' CPU and
PostgreSQL's statistics; a returning client's resumed sessions; and the endpoint's cache
with an answer for every name, built in this process (the memory one endpoint process
needs when clients ask every name). With `--held`, the edge's own log says how long each
load took ("Caddy holds N certificates (loaded in X ms)").

    python bench/edge_held.py [--held] [SIZE ...]

Prints the figures; docs/decisions/edge.md and bench/results.md quote them.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
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
from django.db import connection, models  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.edge import handshakes  # noqa: E402
from bench.edge.platform import Platform  # noqa: E402
from bench.edge.verify import SLUG, ZONE, fresh_project  # noqa: E402
from domains.choices import CertState, CheckCode, Plan, State  # noqa: E402
from domains.edge.cache import CertificateCache  # noqa: E402
from domains.models import Certificate, Domain, Project  # noqa: E402
from domains.pki import sealing  # noqa: E402
from domains.services.custom_domains import domain_remove  # noqa: E402
from domains.services.projects import project_create  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
REMOVES = 5
KEPT = 4  # the other tenant's names, one kept-alive connection each
HANDSHAKES = 500
RESUMES = 20
SAMPLE = 10_000  # answers in the cache whose memory is measured
PROBE_EVERY = 0.01
ISSUER = "edge_held bench CA"
OTHER = "edge-held-other"  # the other tenant's project and zone
LOADED = re.compile(r"Caddy holds (\d+) certificates \(loaded in (\d+) ms\)")


def other_project() -> Project:
    Project.objects.filter(slug=OTHER).delete()
    owner, _ = get_user_model().objects.get_or_create(username=OTHER)
    return project_create(slug=OTHER, owner=owner, plan=Plan.ENTERPRISE, name=OTHER)


def make_domains(project: Project, names: list[str]) -> None:
    """Active domains of `project` with those names, each with a certificate naming it alone."""
    now = timezone.now()
    domains = Domain.objects.bulk_create(
        (Domain(project=project, hostname=name, state=State.ACTIVE, cert_state=CertState.ISSUED,
                verified_at=now, checked_at=now, check_code=CheckCode.OK) for name in names),
        batch_size=5000,
    )  # fmt: skip
    issuer_key = ec.generate_private_key(ec.SECP256R1())
    key = ec.generate_private_key(ec.SECP256R1())  # every certificate's
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
    sealed_key = sealing.seal(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
    )
    rows = []
    for domain in domains:
        certificate = (
            x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(days=90))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(domain.hostname)]),
                           critical=False)
            .sign(issuer_key, hashes.SHA256())
        )  # fmt: skip
        rows.append(
            Certificate(
                domain=domain, serial=format(certificate.serial_number, "x"),
                not_before=now - timedelta(hours=1), not_after=now + timedelta(days=90),
                san=domain.hostname, issuer=ISSUER, renew_after=now + timedelta(days=60),
                pem=certificate.public_bytes(serialization.Encoding.PEM).decode(),
                key_pem=sealed_key,
            )
        )  # fmt: skip
    Certificate.objects.bulk_create(rows, batch_size=5000)


def drop_domains() -> None:
    """The previous run's domains, and the rows pointing at them, a statement or two per table:
    Django's cascade from their projects takes many minutes over 100,000."""
    domains = Domain.objects.filter(project__slug__in=[SLUG, OTHER])
    for relation in Domain._meta.related_objects:
        field = relation.field.name
        pointing = relation.related_model.objects.filter(**{f"{field}__in": domains})
        if relation.on_delete is models.CASCADE:
            pointing.delete()
        else:
            pointing.update(**{field: None})
    domains.delete()


def seed(size: int) -> tuple[list[str], list[str]]:
    """The bench project's `size` names and the other project's KEPT, all live."""
    started = time.monotonic()
    drop_domains()
    project, _ = fresh_project()
    names = [f"held-{i:06d}.{ZONE}" for i in range(size)]
    make_domains(project, names)
    kept = [f"kept-{i}.{OTHER}.test" for i in range(KEPT)]
    make_domains(other_project(), kept)
    # What autovacuum does after such a bulk insert, in its own time: without it the planner
    # still counts the tables as nearly empty.
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Domain._meta.db_table}, {Certificate._meta.db_table}")
    print(f"edge_held: {size:,} domains seeded in {time.monotonic() - started:.0f} s", flush=True)
    return names, kept


def loads(log: Path) -> list[tuple[int, int]]:
    return [(int(n), int(ms)) for n, ms in LOADED.findall(log.read_text(errors="replace"))]


def wait_for_load(log: Path, size: int) -> None:
    deadline = time.monotonic() + 300
    while not any(n == size for n, _ in loads(log)):
        if time.monotonic() > deadline:
            raise SystemExit(f"edge_held: Caddy never held {size}:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)


def removed_names(names: list[str]) -> list[str]:
    return names[:: len(names) // REMOVES][:REMOVES]


def removes(platform: Platform, names: list[str], kept: list[str]) -> tuple[list[float], int]:
    """REMOVES names removed one after another: the seconds until each is presented the
    placeholder, and how often the edge closed one of the kept connections meanwhile."""
    owner = get_user_model().objects.get(username=SLUG)
    connections = [handshakes.KeptConnection(platform.https_port, name) for name in kept]
    gone = []
    try:
        for name in removed_names(names):
            assert not handshakes.presents_placeholder(platform.https_port, name), name
            domain_remove(domain=Domain.objects.get(hostname=name), actor=owner)
            removed = time.monotonic()
            while not handshakes.presents_placeholder(platform.https_port, name):
                time.sleep(PROBE_EVERY)
            gone.append(time.monotonic() - removed)
            time.sleep(1.5)  # the next Remove on a settled edge
            for kept_connection in connections:
                kept_connection.still_open()
        return gone, sum(c.closed for c in connections)
    finally:
        for kept_connection in connections:
            kept_connection.close()


def cache_bytes(names: list[str]) -> float:
    """What the endpoint's cache takes in memory per answer kept (bytes), filled with an
    answer for each of `names` in this process."""
    cache = CertificateCache(fresh_for=math.inf)
    cache.answer(names[0])  # the version read and the connection opened: not the answers'
    tracemalloc.start()
    for name in names[1:]:
        assert cache.answer(name).bundle is not None, name
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return kept / (len(names) - 1)


def measure(size: int, held: bool) -> None:
    names, kept = seed(size)
    workdir = Path(tempfile.mkdtemp(prefix="edge-held-"))
    # The edge's INFO lines say how long each load took; the counts are pushed often.
    ENV.update(EDGE_HELD_CERTIFICATES=str(size if held else 0), LOG_LEVEL="INFO",
               METRICS_FLUSH_INTERVAL=str(handshakes.FLUSH_EVERY))  # fmt: skip
    platform = Platform.start(workdir)
    log = platform.log_path("edge")
    how = f"{size:,} held" if held else f"{size:,} live, none held"
    try:
        if held:
            wait_for_load(log, size)
        gone, closed = removes(platform, names, kept)
        print(
            f"edge_held: {how}: Remove → placeholder median "
            f"{statistics.median(gone) * 1000:.0f} ms, max {max(gone) * 1000:.0f} ms "
            f"({len(gone)} Removes); the other tenant's {KEPT} kept-alive connections closed "
            f"{closed} times",
            flush=True,
        )
        if held:
            times = [ms for _, ms in loads(log)]
            later = times[1:]
            print(f"edge_held: {how}: first load {times[0]} ms, later loads median "
                  f"{statistics.median(later):.0f} ms (max {max(later)})", flush=True)  # fmt: skip
        asked = names[1 :: len(names) // HANDSHAKES][:HANDSHAKES]
        for when in ("after a version move", "again"):
            cost = handshakes.full_handshakes(platform, asked)
            print(f"edge_held: {how}: {when}: {cost}", flush=True)
        resumed, lookups = handshakes.resumption(platform.https_port, kept[0], RESUMES)
        print(f"edge_held: {how}: a returning client resumed {resumed} of {RESUMES} sessions, "
              f"{lookups:.0f} endpoint lookups", flush=True)  # fmt: skip
    finally:
        platform.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    removed = set(removed_names(names))
    sample = [name for name in names if name not in removed][:SAMPLE]
    per_answer = cache_bytes(sample)
    print(f"edge_held: {size:,} live: the endpoint's cache takes {per_answer / 1024:.2f} KiB per "
          f"answer ({len(sample):,} answers), {per_answer * size / 2**20:.0f} MiB with all "
          f"{size:,}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--held", action="store_true", help="Caddy holds every certificate")
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    args = parser.parse_args()
    create_database()
    with exclusive(ENV):
        migrate(ENV)
        for size in args.sizes:
            measure(size, args.held)


if __name__ == "__main__":
    main()
