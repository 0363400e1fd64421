from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from petstore.http.favicon import favicon
from petstore.http.languages import language_set

urlpatterns = [
    # Every app's API, its OpenAPI document and docs, and the catch-all 404 of /v1.
    path("v1/", include("petstore.api.urls")),
    # The admin's own password change checks the old password outside the sign-in limits
    # and the re-authentication window: staff change theirs on the account page too.
    path(
        "admin/password_change/",
        RedirectView.as_view(pattern_name="password_change", permanent=False),
    ),
    path("admin/", admin.site.urls),
    # Sign in, sign out, the password change; no password reset (petstore/http/accounts.py).
    # Sign-in limits on this form and the admin's: django-axes (petstore/http/signin.py).
    path("accounts/", include("petstore.http.accounts")),
    path("favicon.ico", favicon),
    # The top bar's language switch (petstore/http/languages.py).
    path("language/", language_set, name="set_language"),
    path("", include("domains.urls")),
]

# Errors under /v1 are the API's Error body; elsewhere Django's default pages.
handler400 = "petstore.api.errors.handler400"
handler404 = "petstore.api.errors.handler404"
handler500 = "petstore.api.errors.handler500"
