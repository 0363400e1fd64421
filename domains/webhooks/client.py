"""One HTTP POST to an address the guard checked (address.py), and nothing else.

The connection goes to the checked IP address, not to the name: urllib3's pool is opened
on the address, and TLS still verifies the certificate against the host name
(`server_hostname` for SNI, `assert_hostname` for the check), public urllib3 API only. No
redirects are followed (a 3xx is the receiver's answer), no retries here (delivery.py
retries on its schedule), and the whole attempt is bounded by WEBHOOKS_TIMEOUT: the
connection and every read, and the answer is read only up to its first bytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import urllib3
from django.conf import settings

from domains.webhooks.address import Target

READ_AT_MOST = 4096


@dataclass(frozen=True)
class Answer:
    status: int | None
    duration_ms: int
    # The answer's first bytes (as text), or why there was none.
    text: str

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(
    target: Target,
    *,
    body: bytes,
    headers: dict[str, str],
    excerpt: int,
    timeout: float | None = None,
) -> Answer:
    """POST `body`; `timeout` (default WEBHOOKS_TIMEOUT) bounds the connection and reads."""
    started = time.monotonic()
    address = target.addresses[0]
    limit = urllib3.Timeout(total=settings.WEBHOOKS_TIMEOUT if timeout is None else timeout)
    pool: urllib3.HTTPConnectionPool
    if target.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address,
            target.port,
            cert_reqs="CERT_REQUIRED",
            ca_certs=settings.WEBHOOKS_CA_BUNDLE or None,
            server_hostname=target.host,
            assert_hostname=target.host,
            timeout=limit,
            retries=False,
            maxsize=1,
        )
    else:
        pool = urllib3.HTTPConnectionPool(
            address, target.port, timeout=limit, retries=False, maxsize=1
        )
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    all_headers = {
        "Host": host_header,
        "Content-Type": "application/json",
        "User-Agent": "Petstore-Webhooks/1",
        **headers,
    }
    try:
        with pool:
            response = pool.urlopen(
                "POST",
                target.path,
                body=body,
                headers=all_headers,
                redirect=False,
                preload_content=False,
                assert_same_host=False,
            )
            try:
                first = response.read(READ_AT_MOST)
            finally:
                response.release_conn()
                response.close()
    except urllib3.exceptions.HTTPError as exc:
        return Answer(None, _ms(started), _why(exc)[:excerpt])
    text = first.decode("utf-8", errors="replace")[:excerpt]
    return Answer(response.status, _ms(started), text)


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib3.exceptions.TimeoutError):
        return f"No answer within {settings.WEBHOOKS_TIMEOUT:g} s."
    if isinstance(exc, urllib3.exceptions.SSLError):
        return f"TLS failed: {exc}"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "The connection was refused or could not be made."
    return f"{type(exc).__name__}: {exc}"
