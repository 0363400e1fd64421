"""The language a person reads the dashboard and their mail in.

A visitor's page is in the language of the switch's cookie, else of their browser's
`Accept-Language`, else English (Django's LocaleMiddleware, settings.LANGUAGES). The switch
(petstore/http/languages.py) also keeps the choice on the account (AccountLanguage), for
what has no browser to ask: mail is written in its recipient's language (`in_language_of`),
and signing in on another browser restores it (`restore_on_sign_in`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Literal, cast

from django.conf import settings
from django.http import HttpResponse
from django.utils import translation

from petstore.models import AccountLanguage


def offered(language: str | None) -> bool:
    return language in dict(settings.LANGUAGES)


def language_of(user: Any) -> str:
    """The language `user` chose, or the platform's own (LANGUAGE_CODE) when they chose none,
    or one no longer offered, or are nobody (an invitation to an address without an account)."""
    if user is None or not getattr(user, "pk", None):
        return settings.LANGUAGE_CODE
    chosen = (
        AccountLanguage.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    )
    return chosen if chosen and offered(chosen) else settings.LANGUAGE_CODE


def in_language_of(user: Any) -> AbstractContextManager[None]:
    """`with in_language_of(user):` renders (a mail, its subject) in `user`'s language."""
    return translation.override(language_of(user))


def keep_choice(user: Any, language: str) -> None:
    """The account's language is `language` from now on (an offered one)."""
    AccountLanguage.objects.update_or_create(user_id=user.pk, defaults={"language": language})


def set_cookie(response: HttpResponse, language: str) -> None:
    """The switch's cookie, as Django's set_language writes it."""
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=cast(Literal["Lax", "Strict", "None"], settings.LANGUAGE_COOKIE_SAMESITE),
    )


def restore_on_sign_in(user: Any, response: HttpResponse) -> None:
    """After a sign-in: the account's chosen language becomes this browser's too."""
    chosen = (
        AccountLanguage.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    )
    if chosen and offered(chosen):
        set_cookie(response, chosen)
