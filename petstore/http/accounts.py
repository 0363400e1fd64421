"""The account pages under /accounts/: sign in, sign out, change the password. Nothing else.

Only these of `django.contrib.auth`'s views are mounted. The password-reset views are not:
a reset mails a way into the account to whatever address the account holds, so it is only
as safe as every path that changes that address, and it is one more anonymous form to
throttle and to make answer alike for known and unknown addresses. A small platform whose
staff can set a password in the admin is better served by no reset at all
(docs/decisions/security.md, "Accounts").

Signing in and changing the password start the re-authentication window
(petstore/http/reauth.py); the password change keeps this session and ends every other
one of the user (Django's session hash: sessions hold a hash of the password they were
opened with, and one of another password is flushed at its next request).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.urls import path, reverse_lazy

from petstore import languages
from petstore.http import reauth


class SignInView(auth_views.LoginView):
    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        reauth.password_typed(self.request)  # after login(), which renews the session
        # The language the account chose on another browser is this one's too.
        languages.restore_on_sign_in(form.get_user(), response)
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = reauth.PasswordChangeForm
    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("password_change_done")

    def get_form_kwargs(self) -> dict[str, Any]:
        return super().get_form_kwargs() | {"request": self.request}

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)  # saves, then keeps this session signed in
        reauth.password_typed(self.request)
        return response


urlpatterns = [
    path("login/", SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_change/", PasswordChangeView.as_view(), name="password_change"),
    path(
        "password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(
            template_name="accounts/password_change_done.html"
        ),
        name="password_change_done",
    ),
]
