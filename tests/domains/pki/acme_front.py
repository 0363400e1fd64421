"""A TLS front of the test's own before Pebble: what a real CA does that Pebble does not.

It passes every request on to Pebble with the front's own Host, so Pebble names the
front in every URL it writes (its directory, Location, Link) and checks each request's
signed `url` against the front's address: the ACME client speaks to the front alone. On
the way it can
- offer ACME Renewal Information (RFC 9773; Debian's Pebble predates it): `renewalInfo`
  added to the directory, and `/renewal-info/<certificate id>` answering `window`;
- take its time to sign: `finalize_delay` seconds before a finalize request goes on
  (`finalizing` is set when one arrives), as a busy CA does;
- stop answering its renewal information (`renewal_info_cut`): the connection is closed
  without a response, as a CA that went away;
- refuse new orders as a CA past one of its limits does (`rate_limited`: RFC 8555
  `rateLimited`, HTTP 429, with that many seconds as its Retry-After; Pebble never is);
- fail new orders with a server error (`server_error`: that status, with RFC 8555's
  `serverInternal` for a 500, or a bare HTML page, as a proxy before a CA that is down).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

RENEWAL_INFO = "/renewal-info"
# Pebble's newOrder, as its directory names it.
NEW_ORDER = "/order-plz"
# Not passed back: requests has undone the transfer and content encodings already.
DROPPED = {"connection", "transfer-encoding", "content-encoding", "content-length", "keep-alive"}


class AcmeFront:
    def __init__(self, upstream: str, ca_bundle: Path, certificate: Path, key: Path):
        self.upstream = upstream.rstrip("/")
        self.ca_bundle = ca_bundle
        self.window: tuple[datetime, datetime] | None = None
        self.renewal_asked: list[str] = []
        self.renewal_info_cut = False
        self.finalize_delay = 0.0
        self.rate_limited: int | None = None
        self.new_orders_refused = 0
        self.server_error: int | None = None
        self.finalizing = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certificate), str(key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def directory(self) -> str:
        return f"https://{self.host}/dir"

    def start(self) -> AcmeFront:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, method: str, path: str, body: bytes, headers: dict[str, str]):
        """(status, headers, body) for one request; a status of None: no answer at all."""
        if path.startswith(RENEWAL_INFO + "/") and self.window is not None:
            self.renewal_asked.append(path.rsplit("/", 1)[1])
            if self.renewal_info_cut:
                return None, {}, b""
            start, end = self.window
            window = {"start": start.isoformat(), "end": end.isoformat()}
            document = json.dumps({"suggestedWindow": window}).encode()
            return 200, {"Content-Type": "application/json", "Retry-After": "21600"}, document
        if path == NEW_ORDER and self.rate_limited is not None:
            self.new_orders_refused += 1
            problem = {
                "type": "urn:ietf:params:acme:error:rateLimited",
                "detail": "too many new orders recently",
                "status": 429,
            }
            headers = {
                "Content-Type": "application/problem+json",
                "Retry-After": str(self.rate_limited),
            }
            return 429, headers, json.dumps(problem).encode()
        if path == NEW_ORDER and self.server_error == 500:
            problem = {
                "type": "urn:ietf:params:acme:error:serverInternal",
                "detail": "the database is unavailable",
                "status": 500,
            }
            headers = {"Content-Type": "application/problem+json"}
            return 500, headers, json.dumps(problem).encode()
        if path == NEW_ORDER and self.server_error is not None:
            page = b"<html><body>Bad gateway</body></html>"
            return self.server_error, {"Content-Type": "text/html"}, page
        if path.startswith("/finalize-order/"):
            self.finalizing.set()
            time.sleep(self.finalize_delay)
        forwarded = {"Host": self.host, "User-Agent": headers.get("User-Agent", "")}
        if "Content-Type" in headers:
            forwarded["Content-Type"] = headers["Content-Type"]
        reply = requests.request(
            method, self.upstream + path, data=body or None, headers=forwarded,
            verify=str(self.ca_bundle), allow_redirects=False, timeout=30,
        )  # fmt: skip
        content = reply.content
        if path == "/dir" and self.window is not None:
            document = reply.json()
            document["renewalInfo"] = f"https://{self.host}{RENEWAL_INFO}"
            content = json.dumps(document).encode()
        kept = {k: v for k, v in reply.headers.items() if k.lower() not in DROPPED}
        return reply.status_code, kept, content


def _handler(front: AcmeFront) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, content = front.answer(
                self.command, self.path, body, dict(self.headers.items())
            )
            if status is None:
                self.close_connection = True
                return
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(content)

        do_GET = do_POST = do_HEAD = _any

        def log_message(self, format: str, *args: object) -> None:
            return None

    return Handler
