"""A hostile ACME CA on loopback (plain HTTP), and a server that records who reached it.

`FakeAcme` serves just enough of RFC 8555 for the `acme` client: the directory,
newNonce, newAccount, newOrder, an authorization already valid (so the order is
ready at once), finalize and the certificate. It reads the JWS payloads without
verifying them. Its `misbehaviour` says how it betrays the client:

- `honest`: the certificate ordered (the CSR's name and key, valid now), signed by its own CA;
- `redirect-directory` / `redirect-certificate`: a 302 to `redirect_to` instead of the
  directory / the certificate;
- `other-name`, `other-key`, `expired`: a certificate for other-name.example, for the
  ordered name with another key, or for the ordered name and key but expired;
- `rate-limited`: no betrayal, a limit: newOrder answers 429 with RFC 8555's `rateLimited`
  problem and a Retry-After of RATE_LIMIT_RETRY_AFTER seconds.

`Recorder` stands for what a redirect must never reach (the edge's loopback key
endpoint): it answers every request and keeps its path.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

OTHER_NAME = "other-name.example"
MISBEHAVIOURS = (
    "honest",
    "redirect-directory",
    "redirect-certificate",
    "other-name",
    "other-key",
    "expired",
    "rate-limited",
)
RATE_LIMIT_RETRY_AFTER = 120


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        pass


class Recorder(_Server):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Record)
        self.requests: list[str] = []


class _Record(_Quiet):
    server: Recorder

    def _answer(self) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _answer  # noqa: N815 (BaseHTTPRequestHandler's names)


class FakeAcme(_Server):
    def __init__(self, misbehaviour: str = "honest", redirect_to: str = "") -> None:
        assert misbehaviour in MISBEHAVIOURS, misbehaviour
        super().__init__(("127.0.0.1", 0), _Acme)
        self.misbehaviour = misbehaviour
        self.redirect_to = redirect_to
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Fake ACME CA")])
        self.orders: dict[str, dict[str, Any]] = {}
        self.certificates: dict[str, str] = {}
        self.lock = threading.Lock()

    @property
    def directory(self) -> str:
        return f"{self.base}/directory"

    def sign(self, csr: x509.CertificateSigningRequest) -> str:
        """The certificate the misbehaviour calls for, for what `csr` asks, then the CA's."""
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        name = san.get_values_for_type(x509.DNSName)[0]
        public_key = csr.public_key()
        now = datetime.now(UTC)
        not_before, not_after = now - timedelta(hours=1), now + timedelta(days=90)
        if self.misbehaviour == "other-name":
            name = OTHER_NAME
        elif self.misbehaviour == "other-key":
            public_key = ec.generate_private_key(ec.SECP256R1()).public_key()
        elif self.misbehaviour == "expired":
            not_before, not_after = now - timedelta(days=100), now - timedelta(days=10)
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.ca_name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .sign(self.ca_key, hashes.SHA256())
        )
        root = (
            x509.CertificateBuilder()
            .subject_name(self.ca_name)
            .issuer_name(self.ca_name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(self.ca_key, hashes.SHA256())
        )
        return "".join(
            cert.public_bytes(serialization.Encoding.PEM).decode() for cert in (leaf, root)
        )


class _Acme(_Quiet):
    server: FakeAcme

    def _send(
        self, status: int, body: bytes = b"", content_type: str = "application/json", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Replay-Nonce", _b64(secrets.token_bytes(16)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, document: dict[str, Any], **headers: str) -> None:
        self._send(status, json.dumps(document).encode(), **headers)

    def _redirect(self) -> None:
        self._send(302, Location=self.server.redirect_to)

    def do_HEAD(self) -> None:  # noqa: N802 (BaseHTTPRequestHandler's names)
        self._send(200)  # newNonce: the header is the answer

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/directory":
            self._send(404)
            return
        if self.server.misbehaviour == "redirect-directory":
            self._redirect()
            return
        base = self.server.base
        self._json(
            200,
            {
                "newNonce": f"{base}/nonce",
                "newAccount": f"{base}/account",
                "newOrder": f"{base}/order",
                "revokeCert": f"{base}/revoke",
                "keyChange": f"{base}/key-change",
            },
        )

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        jws = json.loads(self.rfile.read(length) or b"{}")
        # POST-as-GET has an empty payload.
        payload: dict[str, Any] = json.loads(_unb64(jws["payload"])) if jws.get("payload") else {}
        route, _, number = self.path.strip("/").partition("/")
        base = self.server.base
        orders, certificates = self.server.orders, self.server.certificates
        with self.server.lock:
            if route == "account":
                self._json(201, {"status": "valid"}, Location=f"{base}/account/1")
            elif route == "order" and not number and self.server.misbehaviour == "rate-limited":
                problem = {
                    "type": "urn:ietf:params:acme:error:rateLimited",
                    "detail": "too many new orders recently",
                }
                self._send(
                    429,
                    json.dumps(problem).encode(),
                    "application/problem+json",
                    Retry_After=str(RATE_LIMIT_RETRY_AFTER),
                )
            elif route == "order" and not number:
                number = str(len(orders) + 1)
                orders[number] = {
                    "status": "ready",  # its one authorization is valid already
                    "identifiers": payload["identifiers"],
                    "authorizations": [f"{base}/authz/{number}"],
                    "finalize": f"{base}/finalize/{number}",
                }
                self._json(201, orders[number], Location=f"{base}/order/{number}")
            elif route == "order" and number in orders:
                self._json(200, orders[number])
            elif route == "authz" and number in orders:
                self._json(200, self._authorization(number))
            elif route == "finalize" and number in orders:
                certificates[number] = self.server.sign(
                    x509.load_der_x509_csr(_unb64(payload["csr"]))
                )
                orders[number].update(status="valid", certificate=f"{base}/cert/{number}")
                self._json(200, orders[number])
            elif route == "cert" and number in certificates:
                if self.server.misbehaviour == "redirect-certificate":
                    self._redirect()
                else:
                    chain = certificates[number].encode()
                    self._send(200, chain, "application/pem-certificate-chain")
            else:
                self._send(404)

    def _authorization(self, number: str) -> dict[str, Any]:
        return {
            "status": "valid",
            "identifier": self.server.orders[number]["identifiers"][0],
            "challenges": [
                {
                    "type": "http-01",
                    "url": f"{self.server.base}/chall/{number}",
                    "token": _b64(secrets.token_bytes(32)),
                    "status": "valid",
                }
            ],
        }
