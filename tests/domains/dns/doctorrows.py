"""How the domain doctor's tests read what a check stored: its diagnosis, its findings by
code, and each server's row."""

from __future__ import annotations

from typing import Any

from domains.models import Domain

WWW = "www.example.test"
OLD = "old-host.example.net"


def diagnosis(domain: Domain) -> dict[str, Any]:
    assert domain.check_diagnosis is not None
    return domain.check_diagnosis


def findings(domain: Domain) -> dict[str, dict]:
    return {finding["code"]: finding for finding in diagnosis(domain)["findings"]}


def answers(domain: Domain) -> list[tuple[str, str, str, bool]]:
    return [
        (server["name"], server["address"], server["answer"], server["agrees"])
        for server in diagnosis(domain)["nameservers"]
    ]
