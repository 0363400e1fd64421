"""A zone's name servers on loopback (devtools/nameservers.py, `manage.py devdns --also
--silent`): one port, an address each, each its own zone files, and one that never
answers."""

from __future__ import annotations

import os
import subprocess
import sys

import dns.exception
import dns.message
import dns.query
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.nameservers import NameServers
from devtools.sockets import free_port
from tests.processes import ROOT, wait_for

ZONE = "$ORIGIN example.test.\n$TTL 60\n@ SOA ns1 host 1 7200 900 1209600 60\n@ NS ns1\n"


def cname(address: str, port: int, name: str = "www.example.test") -> str:
    query = dns.message.make_query(name, "CNAME")
    answer = dns.query.udp(query, address, port=port, timeout=0.5)
    return answer.answer[0][0].target.to_text() if answer.answer else ""


@pytest.fixture
def zone_dirs(tmp_path):
    """Two copies of one zone: the new CNAME in one, the old in the other."""
    new, old = tmp_path / "new", tmp_path / "old"
    for folder, target in ((new, "new.example.net."), (old, "old.example.net.")):
        folder.mkdir()
        (folder / "example.test.zone").write_text(ZONE + f"www CNAME {target}\n")
    return new, old


def test_each_address_serves_its_own_zone_files_on_one_port(zone_dirs):
    new, old = zone_dirs
    servers = NameServers({"127.0.0.5": new, "127.0.0.6": old}, silent=["127.0.0.7"]).start()
    try:
        assert cname("127.0.0.5", servers.port) == "new.example.net."
        assert cname("127.0.0.6", servers.port) == "old.example.net."
        with pytest.raises(dns.exception.Timeout):
            cname("127.0.0.7", servers.port)
        assert servers["127.0.0.7"].queries  # it read the question, and said nothing
    finally:
        servers.stop()


def test_the_devdns_command_serves_other_addresses_and_a_silent_one(zone_dirs, tmp_path):
    new, old = zone_dirs
    port = free_port()
    log = tmp_path / "devdns.log"
    env = {**os.environ, "SECRET_KEY": "x", "DEBUG": "1", "PETSTORE_VAR_DIR": str(tmp_path)}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "devdns", "--port", str(port), "--host", "127.0.0.5",
             "--zones", str(new), "--also", f"127.0.0.6={old}", "--silent", "127.0.0.7"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for(lambda: b"answering nothing" in log.read_bytes(), timeout=30, what="devdns")
        assert f"serving {old}/*.zone on 127.0.0.6:{port}" in log.read_text()
        assert cname("127.0.0.5", port) == "new.example.net."
        assert cname("127.0.0.6", port) == "old.example.net."
        with pytest.raises(dns.exception.Timeout):
            cname("127.0.0.7", port)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_devdns_refuses_an_also_without_its_directory(tmp_path):
    with pytest.raises(CommandError, match="write ADDRESS=DIR"):
        call_command("devdns", "--zones", str(tmp_path), "--also", "127.0.0.6")
