"""Settings → Account: where owner mail goes. A new address is asked for here, with the
current password unless it was typed within the re-authentication window
(petstore/http/reauth.py), and written only when the link mailed to it comes back
(domains/services/notifications.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from domains.dashboard.forms import OwnerEmailForm
from domains.services import notifications


@login_required
@require_http_methods(["GET", "POST"])
def account(request):
    status = 200
    form = OwnerEmailForm(request.POST or None, request=request)
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                sent_to = notifications.owner_email_change_request(
                    user=request.user, email=form.cleaned_data["email"]
                )
            except ValidationError as exc:
                form.add_error("email", exc)
                if exc.error_list[0].code == "email_confirm_limit":
                    status = 429
            else:
                current = request.user.email or _("no address")
                messages.success(
                    request,
                    _(
                        "A confirmation link is on its way to %(email)s. Owner mail goes there "
                        "once you open it; until then it goes to %(current)s."
                    )
                    % {"email": sent_to, "current": current},
                )
                return redirect("dashboard:account")
    # A TemplateResponse: a sign-in lock-out met on the password is said on this form
    # (petstore.http.signin.lockout_response).
    return TemplateResponse(request, "domains/account.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def account_confirm(request, token):
    """The mailed link: a page with a Confirm button (a mail scanner that follows links
    only GETs), whose POST writes the address."""
    try:
        if request.method == "POST":
            change = notifications.owner_email_confirm(user=request.user, token=token)
            messages.success(
                request, _("Owner mail now goes to %(email)s.") % {"email": change.email}
            )
            return redirect("dashboard:account")
        change = notifications.owner_email_change_read(user=request.user, token=token)
    except ValidationError as exc:
        context = {"refused": " ".join(exc.messages)}
        return render(request, "domains/account_confirm.html", context, status=400)
    return render(request, "domains/account_confirm.html", {"change": change})
