"""A request id for every request: taken from a sane `X-Request-ID` header or
made here, returned in the response header, and stamped on every log line
written while the request is handled (so an Error body can be traced to its
log line).

Behind the TLS edge every request arrives with a sane one: the edge keeps a
client's that matches REQUEST_ID_PATTERN and puts its own in place of any other
(domains/edge/caddy.py), and writes it on the request's access line."""

from __future__ import annotations

import contextvars
import logging
import re
import uuid

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

# What a client's id may be: short, and nothing that could break a log line or a header.
REQUEST_ID_PATTERN = r"[A-Za-z0-9._-]{1,64}"
_VALID = re.compile(REQUEST_ID_PATTERN)


def _incoming_or_new(header: str | None) -> str:
    if header and _VALID.fullmatch(header):
        return header
    return uuid.uuid4().hex


class RequestIDMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = _incoming_or_new(request.META.get("HTTP_X_REQUEST_ID"))
        request.request_id = request_id
        token = request_id_var.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-ID"] = request_id
        return response


class RequestIDFilter(logging.Filter):
    """Adds `request_id` to every record (a dash outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True
