"""One-time tokens of the forms that issue a key (the admin's add form, the dashboard's
Settings → API keys): a key is shown once, in the answer to the POST that made it, so a
reload of that answer sends the form again. Each form carries a token kept in the session;
the first POST that issues a key spends it, and a form whose token is spent or unknown
issues nothing. The token is no secret and the key never enters the session."""

from __future__ import annotations

import secrets

from django.http import HttpRequest

FIELD = "issue_token"
_SESSION_KEY = "apikeys:issue-tokens"
_KEPT = 20  # forms open at once in one session


def issue_token_new(request: HttpRequest) -> str:
    """A token for a form about to be shown."""
    token = secrets.token_urlsafe(16)
    tokens = _tokens(request)
    tokens[:] = [*tokens[-(_KEPT - 1) :], token]
    request.session.modified = True
    return token


def issue_token_open(request: HttpRequest) -> bool:
    """Whether the POSTed form's token may still issue a key."""
    return request.POST.get(FIELD, "") in _tokens(request)


def issue_token_spend(request: HttpRequest) -> bool:
    """Spend the POSTed form's token; False if it was spent or unknown."""
    tokens = _tokens(request)
    token = request.POST.get(FIELD, "")
    if token not in tokens:
        return False
    tokens.remove(token)
    request.session.modified = True
    return True


def _tokens(request: HttpRequest) -> list[str]:
    tokens: list[str] = request.session.setdefault(_SESSION_KEY, [])
    return tokens
