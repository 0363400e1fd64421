"""The development pages under `/dev/` (devtools/urls.py, the root URL conf under DEBUG):
the mail inbox and the webhook receiver. Each answers 404 unless DEBUG is on, whatever URL
conf mounts it, and shows its contents to a signed-in user only: the inbox holds every
owner's mail, sign-in links included."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from devtools import mailinbox, webhookreceiver

View = Callable[..., HttpResponse]

# The HTML part of a mail, on a page of its own in a sandbox: no script runs and nothing is
# fetched; its links can still be followed, a new tab's outside the sandbox.
MAIL_HTML_POLICY = (
    "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; "
    "style-src 'unsafe-inline'; img-src data:"
)


def debug_only(view: View) -> View:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.DEBUG:
            raise Http404("development pages are served under DEBUG only")
        return view(request, *args, **kwargs)

    return wrapped


@debug_only
@login_required
def mail_list(request: HttpRequest) -> HttpResponse:
    return render(request, "devtools/mail_list.html", {"mails": mailinbox.newest_first()})


@debug_only
@login_required
def mail_detail(request: HttpRequest, name: str) -> HttpResponse:
    mail = mailinbox.read(name)
    if mail is None:
        raise Http404("no such mail in the inbox")
    return render(request, "devtools/mail_detail.html", {"mail": mail})


@debug_only
@login_required
def mail_html(request: HttpRequest, name: str) -> HttpResponse:
    mail = mailinbox.read(name)
    if mail is None or mail.html is None:
        raise Http404("no such mail, or it has no HTML part")
    response = HttpResponse(mail.html, content_type="text/html; charset=utf-8")
    response["Content-Security-Policy"] = MAIL_HTML_POLICY
    return response


def _receiver_url(name: str) -> str:
    # The address the worker can reach: loopback and the web process's port, as the
    # endpoint form accepts under DEBUG (WEBHOOKS_ALLOW_LOOPBACK).
    return f"http://127.0.0.1:{settings.HTTP_PORT}/dev/webhooks/{name}/"


def sent_headers(request: HttpRequest) -> dict[str, str]:
    """The request's headers as the sender sent them. A WSGI server passes its process's
    environment in the request's too, and `make run` sets HTTP_PORT there, which Django
    would read as a `Port` header: a variable of the process, with its value, is left out."""
    return {
        header: value
        for header, value in request.headers.items()
        if os.environ.get("HTTP_" + header.upper().replace("-", "_")) != value
    }


@debug_only
@csrf_exempt  # the platform's webhook worker POSTs here, as to any receiver
@require_http_methods(["GET", "POST"])
def webhook_receiver(request: HttpRequest, name: str) -> HttpResponse:
    if request.method == "POST":
        delivery = webhookreceiver.receive(name, request.body, sent_headers(request))
        return HttpResponse(status=204 if delivery.verified else 200)
    return _webhook_page(request, name)


@login_required
def _webhook_page(request: HttpRequest, name: str) -> HttpResponse:
    context = {
        "name": name,
        "url": _receiver_url(name),
        "has_secret": bool(webhookreceiver.secret(name)),
        "deliveries": webhookreceiver.deliveries(name),
    }
    return render(request, "devtools/webhooks.html", context)


@debug_only
@login_required
@require_POST
def webhook_secret(request: HttpRequest, name: str) -> HttpResponse:
    try:
        webhookreceiver.set_secret(name, request.POST.get("secret", ""))
    except ValueError:
        messages.error(request, "That is not an endpoint secret: paste the whsec_… value.")
    else:
        messages.success(request, "Secret kept: the next deliveries are checked with it.")
    return redirect("devtools:webhooks", name=name)
