"""The walk-throughs' URLs name `make run`'s ports as petstore/ports.py declares them: plain
HTTP on the web process's default port, HTTPS on the development edge's, so a default that
moves cannot leave README.md and docs/ on the old one."""

from __future__ import annotations

import re

from petstore.ports import DEFAULT_PORT, MAKE_RUN_HTTPS_PORT
from tests.processes import ROOT

# A URL of a `make run` on this machine: localhost, loopback, or a name under .test.
LOCAL_URL = re.compile(r"\b(https?)://(?:localhost|127\.0\.0\.1|[A-Za-z0-9.-]+\.test):(\d+)\b")
PORTS = {"http": DEFAULT_PORT, "https": MAKE_RUN_HTTPS_PORT}


def local_urls(text: str) -> list[tuple[str, int]]:
    return [(scheme, int(port)) for scheme, port in LOCAL_URL.findall(text)]


def test_the_pattern_finds_local_urls_and_leaves_others_alone():
    text = (
        "http://localhost:8123/v1 https://shop.example.test:8444/ http://127.0.0.1:9/x "
        "smtp://localhost:25 https://example.com:8443/ http://localhost/ 10.1.2.3:8000"
    )
    assert local_urls(text) == [("http", 8123), ("https", 8444), ("http", 9)]


def test_the_docs_urls_use_the_declared_default_ports():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    wrong = {
        f"{page.relative_to(ROOT)}: {scheme}://…:{port}"
        for page in pages
        for scheme, port in local_urls(page.read_text())
        if port != PORTS[scheme]
    }
    assert not wrong
    assert local_urls((ROOT / "README.md").read_text())  # the check reads the walk-throughs
