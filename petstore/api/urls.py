"""Every route under /v1: each app's operations, the OpenAPI document and its docs page, and
last the catch-all that answers any other path with the Error body's 404 (DEBUG or not).

An app adds its routes by adding its own `urls` module here, before the catch-all."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView

from petstore.api.errors import unknown_path

urlpatterns = [
    path("", include("domains.api.urls")),
    path("", include("pets.api.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    # The page and its configuration script (`?script=`) apart: no inline script, so the
    # page runs under the site's Content-Security-Policy unchanged (petstore/http/csp.py).
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="openapi", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    re_path(r"^.*$", unknown_path),
]
