"""Every operation of the URL configuration names the key scope it needs (a method that names
none is refused to every key: petstore/api/permissions.py), and the scope is one of the nine."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from petstore.api.views import BaseAPIView
from petstore.apikeys.scopes import ALL_SCOPES

METHODS = ("get", "post", "put", "patch", "delete")


def _routes(resolver: URLResolver) -> list[URLPattern]:
    routes: list[URLPattern] = []
    for entry in resolver.url_patterns:
        routes += _routes(entry) if isinstance(entry, URLResolver) else [entry]
    return routes


def operations() -> list[tuple[type[BaseAPIView], str, str]]:
    found = []
    for route in _routes(get_resolver("petstore.urls")):
        view = getattr(route.callback, "view_class", None)
        if view is None or not issubclass(view, BaseAPIView):
            continue
        found += [(view, method, str(route.pattern)) for method in METHODS if hasattr(view, method)]
    return found


def test_the_operations_are_read_from_the_url_configuration():
    paths = {path for _, _, path in operations()}
    assert "pets" in paths and any("domains" in path for path in paths)
    assert len(operations()) >= 15


def test_every_operation_names_one_of_the_scopes():
    unnamed = [
        f"{method.upper()} {path} ({view.__qualname__}): {scope!r}"
        for view, method, path in operations()
        if (scope := view().required_scope(_request(method))) is None
        or str(scope) not in ALL_SCOPES
    ]
    assert unnamed == []


def _request(method: str) -> Request:
    return Request(APIRequestFactory().generic(method.upper(), "/"))
