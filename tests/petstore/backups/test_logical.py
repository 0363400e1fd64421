"""`manage.py backup`: a pg_dump of the platform that restores into a new database with
nothing lost, as docs/operators/backups.md tells an operator to check one.

The platform under test is this test's database, committed (a pg_dump sees only committed
rows); the restore goes to a private PostgreSQL 18 from the wheel (devtools.embedded),
whose pg_dump and pg_restore the commands run.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import requests
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from devtools import embedded
from domains.models import Certificate
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.projects import deploy_record, project_create
from domains.services.verification import domain_check
from domains.services.webhooks import endpoint_create
from pets.models import Category
from pets.services import pet_create
from petstore.apikeys.services import api_key_issue
from petstore.backups import clients
from petstore.models import BackupSuccess
from tests.fixtures.domains import TARGET
from tests.fixtures.people import make_user
from tests.processes import ROOT, service_env, web_server

PG_DUMP = str(embedded.postgres_bin() / "pg_dump")
PG_RESTORE = str(embedded.postgres_bin() / "pg_restore")


def test_an_existing_target_is_refused_in_one_line(db, tmp_path):
    target = tmp_path / "platform.dump"
    target.write_text("an older backup")
    with pytest.raises(CommandError, match=r"^\S+platform.dump exists: .*never overwrites"):
        call_command("backup", str(target), pg_dump=PG_DUMP)
    assert target.read_text() == "an older backup"


def test_a_missing_or_older_pg_dump_is_refused_in_one_line_naming_the_package(db, tmp_path):
    major = clients.server_major()
    install = (
        rf"install PostgreSQL {major}'s client \(Debian: apt-get install postgresql-client-{major},"
    )
    with pytest.raises(CommandError, match=rf"^No pg_dump at /nowhere/pg_dump: {install}"):
        call_command("backup", str(tmp_path / "platform.dump"), pg_dump="/nowhere/pg_dump")
    # A client of an older major, as Debian 12's 15 on PATH against make run's 18 was.
    older = tmp_path / "pg_dump"
    older.write_text(f"#!/bin/sh\necho 'pg_dump (PostgreSQL) {major - 1}.3'\n")
    older.chmod(0o755)
    with pytest.raises(
        CommandError, match=rf"version {major - 1}, older than the server's {major}"
    ):
        call_command("backup", str(tmp_path / "platform.dump"), pg_dump=str(older))
    assert [path.name for path in tmp_path.iterdir()] == ["pg_dump"]


def test_the_pg_dump_of_the_servers_major_is_taken_where_the_host_has_several(db):
    chosen = clients.find_pg_dump(None)
    majors = {clients.client_major(path) for path in clients.candidates()}
    major = clients.server_major()
    # The server's own major when the host has it, else the oldest newer one.
    expected = major if major in majors else min(m for m in majors if m and m > major)
    assert clients.client_major(chosen) == expected


def test_the_copy_is_its_owners_alone_from_its_creation_whatever_the_umask(db, tmp_path):
    target = tmp_path / "platform.dump"
    previous = os.umask(0)
    try:
        call_command("backup", str(target), pg_dump=PG_DUMP)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert BackupSuccess.objects.get(kind=BackupSuccess.Kind.LOGICAL).detail == str(target)


def test_a_sealed_copy_opens_with_its_passphrase_and_no_other(db, tmp_path):
    passphrase = tmp_path / "passphrase"
    passphrase.write_text("a passphrase of more than sixteen characters\n")
    sealed = tmp_path / "platform.sealed"
    call_command("backup", str(sealed), pg_dump=PG_DUMP, encrypt=str(passphrase))
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
    body = sealed.read_bytes()
    assert b"PGDMP" not in body and b"django_session" not in body  # nothing in clear
    opened = tmp_path / "platform.dump"
    call_command("openbackup", str(sealed), str(opened), passphrase_file=str(passphrase))
    assert opened.read_bytes()[:5] == b"PGDMP"
    assert stat.S_IMODE(opened.stat().st_mode) == 0o600
    wrong = tmp_path / "wrong"
    wrong.write_text("another passphrase, just as long\n")
    with pytest.raises(CommandError, match="does not open: a wrong passphrase"):
        call_command(
            "openbackup", str(sealed), str(tmp_path / "x.dump"), passphrase_file=str(wrong)
        )
    assert not (tmp_path / "x.dump").exists()
    # Cut short: the last chunk is missing, and the copy does not open.
    short = tmp_path / "short.sealed"
    short.write_bytes(body[: len(body) // 2])
    with pytest.raises(CommandError, match="cut short"):
        call_command(
            "openbackup", str(short), str(tmp_path / "y.dump"), passphrase_file=str(passphrase)
        )


@pytest.fixture
def private_postgres(tmp_path_factory):
    # A short path: the socket's name must fit in 107 bytes.
    root = Path(tmp_path_factory.mktemp("pg"))
    server = embedded.Postgres(root / "data", root / "s").start()
    yield server
    server.stop()


def restore(server: embedded.Postgres, backup: Path, database: str) -> str:
    """docs/operators/backups.md's restore: a new database, pg_restore into it; its URL."""
    server.create_database(database)
    done = subprocess.run(
        [PG_RESTORE, "--no-owner", "--exit-on-error", f"--dbname={server.url(database)}",
         str(backup)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return server.url(database)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextlib.contextmanager
def connected_to(server: embedded.Postgres, database: str):
    """This process's database connection on `database` of `server`, migrated; the test
    database again afterwards (its teardown flushes that one)."""
    conn = connections["default"]
    saved = dict(conn.settings_dict)
    server.create_database(database)
    conn.close()
    conn.settings_dict.update(HOST=str(server.sockets), PORT="", NAME=database, PASSWORD="")
    conn.settings_dict["USER"] = "postgres"
    try:
        call_command("migrate", verbosity=0)
        yield
    finally:
        conn.close()
        conn.settings_dict.clear()
        conn.settings_dict.update(saved)


def populate(dns_server, webhook_receiver) -> dict:
    """A platform as its services make one: a user with an API key, a Pro project with a
    deploy, two Active domains with their certificates, a webhook endpoint, pets."""
    alice = make_user("alice")
    shop = project_create(slug="shop", owner=alice, plan="pro", name="Shop")
    deploy_record(project=shop, html="<h1>Alice's shop</h1>")
    hostnames = ["www.example.test", "shop.example.test"]
    for hostname in hostnames:
        dns_server.add(hostname, "CNAME", TARGET + ".")
        domain = domain_add(project=shop, hostname=hostname, actor=alice)
        domain_check(domain_id=domain.pk)
        certificates.certificate_issue(domain_id=domain.pk)
    endpoint = endpoint_create(project=shop, url=webhook_receiver.url, events=["domain.active"])
    dogs = Category.objects.create(name="Dogs")
    pets = [pet_create(name=f"Pet {n}", category=dogs) for n in range(7)]
    return {
        "key": api_key_issue(user=alice).plaintext,
        "pets": [pet.pk for pet in pets],
        "serials": {
            hostname: Certificate.objects.get(domain__hostname=hostname).serial
            for hostname in hostnames
        },
        "endpoint": (endpoint.endpoint.pk, endpoint.endpoint.url, endpoint.secret),
    }


def test_a_backup_restores_into_a_new_database_with_nothing_lost(
    transactional_db, settings, tmp_path, private_postgres, dns_server, webhook_receiver
):
    backup = tmp_path / "platform.dump"
    with connected_to(private_postgres, "platform"):
        made = populate(dns_server, webhook_receiver)
        call_command("backup", str(backup), pg_dump=PG_DUMP)
    assert backup.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format

    restored = restore(private_postgres, backup, "restored")
    env = service_env(settings, API_RATE_LIMIT="", API_ADDRESS_RATE_LIMIT="")
    env["DATABASE_URL"] = restored
    # The operator's check: Django's, then each domain's status from the restored rows.
    manage(env, "check")
    for hostname, serial in made["serials"].items():
        status = json.loads(manage(env, "domainstatus", hostname))
        assert (status["state"], status["certificate"]["serial"]) == ("active", serial)
        # The edge's certificate endpoint opens the private key with DOMAINS_KEY_ENCRYPTION_KEY.
        served = manage(
            env, "shell", "-c",
            "from domains.edge.certificates import look_up; "
            f"print(look_up({hostname!r}).bundle.decode())",
        )  # fmt: skip
        assert "BEGIN CERTIFICATE" in served and "PRIVATE KEY" in served
    # The API knows the key and lists every pet.
    with web_server(env, tmp_path) as base:
        listed = requests.get(
            base + "/v1/pets?limit=100",
            headers={"Authorization": f"Bearer {made['key']}"},
            timeout=10,
        )
    assert listed.status_code == 200
    assert [pet["id"] for pet in listed.json()] == made["pets"]
    # A renewal is issued on the restored database (the renewal service, through its command).
    assert "Renewed www.example.test" in manage(env, "renewcertificate", "www.example.test")
    with psycopg.connect(restored) as conn:
        endpoint = conn.execute("SELECT id, url, secret FROM domains_webhookendpoint").fetchall()
        renewed = conn.execute(
            "SELECT count(*) FROM domains_certificate c JOIN domains_domain d"
            " ON d.id = c.domain_id WHERE d.hostname = 'www.example.test'"
        ).fetchone()
    assert endpoint == [made["endpoint"]]
    assert renewed == (2,)  # the restored certificate and its renewal
