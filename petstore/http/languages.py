"""The language switch in the top bar: Django's set_language (its cookie, its redirect back
to a page of this site), and, for a signed-in person, the account's choice kept too
(petstore/languages.py), so their mail follows it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST
from django.views.i18n import set_language

from petstore import languages


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    response = set_language(request)
    language = request.POST.get("language")
    if request.user.is_authenticated and languages.offered(language):
        assert language is not None
        languages.keep_choice(request.user, language)
    return response
