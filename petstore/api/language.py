"""The API answers in the platform's language (LANGUAGE_CODE, English) whatever the request
asks: its codes are for programs, and a message a client logs or matches must not change with
the caller's browser. One rule for every message of an answer under /v1, the platform's own
(a service's refusal, the Error body's sentences) and DRF's (a field's "This field is
required."), so Accept-Language and the switch's cookie are not read there
(docs/adr/0020-translations-compiled-and-committed.md).

Django's LocaleMiddleware everywhere else: the dashboard and the sign-in pages follow the
switch's cookie, else Accept-Language (petstore/languages.py).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.middleware.locale import LocaleMiddleware
from django.utils import translation


def is_api_path(path: str) -> bool:
    return path == "/v1" or path.startswith("/v1/")


class PageLanguageMiddleware(LocaleMiddleware):
    """LocaleMiddleware for pages; LANGUAGE_CODE, said in Content-Language, under /v1."""

    def process_request(self, request: HttpRequest) -> None:
        if not is_api_path(request.path_info):
            return super().process_request(request)
        translation.activate(settings.LANGUAGE_CODE)
        request.LANGUAGE_CODE = translation.get_language()
        return None

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if not is_api_path(request.path_info):
            return super().process_response(request, response)
        # Not Vary: Accept-Language: the answer is the same whatever the request asks.
        response.headers.setdefault("Content-Language", settings.LANGUAGE_CODE)
        return response
