"""What the cluster test reads from the running platform: a worker's unfinished issue
tasks, the database, the certificate an edge presents, what `domainstatus` says."""

from __future__ import annotations

import re
import socket
import ssl
from pathlib import Path

import psycopg
from cryptography import x509

from tests.cluster.services import DATABASE, PrivatePostgres, Service


def in_flight_issuance(worker: Service) -> int:
    """Issue tasks this worker received and has not finished (running or waiting for their
    countdown): the unacknowledged messages its death leaves behind."""
    log = worker.log()
    received = set(
        re.findall(r"Task domains\.tasks\.issue_certificates?\[([^\]]+)\] received", log)
    )
    ended = set(
        re.findall(
            r"Task domains\.tasks\.issue_certificates?\[([^\]]+)\] (?:succeeded|retry|raised)", log
        )
    )
    return len(received - ended)


def query(postgres: PrivatePostgres, sql: str) -> list[tuple]:
    with psycopg.connect(postgres.url(DATABASE)) as connection:
        return connection.execute(sql).fetchall()


def presented_serial(port: int, hostname: str, cafile: Path) -> str:
    """The serial of the leaf an edge presents for `hostname`, verified against Pebble's root."""
    context = ssl.create_default_context(cafile=str(cafile))
    with (
        socket_to(port) as raw,
        context.wrap_socket(raw, server_hostname=hostname) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return format(x509.load_der_x509_certificate(der).serial_number, "x")


def socket_to(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


DOMAINSTATUS = (
    "import json; from io import StringIO; from django.core.management import call_command\n"
    "out = dict()\n"
    "for name in {names!r}:\n"
    "    buffer = StringIO(); call_command('domainstatus', name, stdout=buffer)\n"
    "    out[name] = json.loads(buffer.getvalue())['certificate']['serial']\n"
    "print(json.dumps(out))"
)
