"""ACME HTTP-01 answers (RFC 8555 §8.3), served on a custom domain before anything else.

The CA asks http://<domain>/.well-known/acme-challenge/<token> (Pebble adds a port
to the Host header, which the routing drops) and expects the key authorization
as the body. Answers come from `AcmeChallenge` rows, which every web process
sees; they exist while the domain's order is under way (domains/pki/acme.py).
"""

from __future__ import annotations

from django.http import HttpResponse

from domains.models import AcmeChallenge

PATH = "/.well-known/acme-challenge/"


def answer(host: str, path: str) -> HttpResponse | None:
    """The response for a challenge request, or None when `path` is not one."""
    if not path.startswith(PATH):
        return None
    token = path[len(PATH) :]
    challenge = (
        AcmeChallenge.objects.filter(token=token, domain__hostname=host)
        .values_list("key_authorization", flat=True)
        .first()
    )
    if challenge is None:
        return HttpResponse(status=404, content_type="text/plain; charset=utf-8")
    return HttpResponse(challenge, content_type="text/plain; charset=utf-8")
