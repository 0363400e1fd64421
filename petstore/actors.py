"""Who is making the change at hand: a member signed in, an API key, staff in the admin or a
command, or the platform itself. The audit log (domains/services/audit.py) reads it here, so
no service has to be handed it through every call.

Each request carries its own (ActorMiddleware): it is worked out from the request when the
audit log asks, after the API's authentication has put the key on the request, so the
dashboard's session user, the admin's staff and the API's key are told apart in one place.
A command says who runs it with `acting_as(staff_actor(...))`; anything else (a Celery task,
a shell) is the platform, `system`.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.db import models
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy

from petstore.http.clientaddress import client_address


class ActorType(models.TextChoices):
    USER = "user", gettext_lazy("A member, signed in")
    KEY = "key", gettext_lazy("An API key")
    STAFF = "staff", gettext_lazy("Staff, in the admin or a command")
    SYSTEM = "system", gettext_lazy("The platform")


@dataclass(frozen=True)
class Actor:
    type: str
    user_id: int | None = None
    username: str = ""
    key_prefix: str = ""
    ip: str | None = None
    request_id: str = ""


SYSTEM = Actor(type=ActorType.SYSTEM)

# Set for a whole command, a test or a block of code (acting_as).
_actor: ContextVar[Actor | None] = ContextVar("actor", default=None)
# The request being answered: its actor is known only once its view has authenticated it.
_request: ContextVar[HttpRequest | None] = ContextVar("actor_request", default=None)

# The admin's URL namespace: a change made there is staff's.
ADMIN_NAMESPACE = "admin"


def current_actor() -> Actor:
    """Who is acting now: the one `acting_as` set, else the request's, else the platform."""
    actor = _actor.get()
    if actor is not None:
        return actor
    request = _request.get()
    if request is not None:
        return request_actor(request)
    return SYSTEM


@contextmanager
def acting_as(actor: Actor) -> Iterator[Actor]:
    """Every change made inside is `actor`'s."""
    token = _actor.set(actor)
    try:
        yield actor
    finally:
        _actor.reset(token)


def user_actor(user_id: int, username: str) -> Actor:
    """That user acting in the current request (its address and id kept), whoever the
    request's session names: an account made by the request is not yet its user."""
    current = current_actor()
    return Actor(
        type=ActorType.USER,
        user_id=user_id,
        username=username,
        ip=current.ip,
        request_id=current.request_id,
    )


def staff_actor(username: str | None = None, user_id: int | None = None) -> Actor:
    """Staff running a command: the name given (`--actor`), else the operating system's
    user the command runs as."""
    return Actor(type=ActorType.STAFF, user_id=user_id, username=username or _os_user())


def request_actor(request: HttpRequest) -> Actor:
    """The actor of a request: its API key's (the key and its user), staff's in the admin,
    the signed-in member's elsewhere, and the platform's for a request with none of them."""
    ip = client_address(request) or None
    request_id = getattr(request, "request_id", "")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return Actor(type=ActorType.SYSTEM, ip=ip, request_id=request_id)
    key = getattr(request, "auth", None)
    if key is not None and hasattr(key, "prefix"):
        actor_type, prefix = ActorType.KEY, key.prefix
    elif _in_admin(request) and user.is_staff:
        actor_type, prefix = ActorType.STAFF, ""
    else:
        actor_type, prefix = ActorType.USER, ""
    return Actor(
        type=actor_type,
        user_id=user.pk,
        username=user.get_username(),
        key_prefix=prefix,
        ip=ip,
        request_id=request_id,
    )


def _in_admin(request: HttpRequest) -> bool:
    match = request.resolver_match
    return match is not None and ADMIN_NAMESPACE in match.namespaces


class ActorMiddleware:
    """Makes the request the one `current_actor()` asks while it is answered."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        # No name for this uid (a container's arbitrary user): still staff, unnamed.
        return "staff"
