"""A project's Members page (the list, invitations, role changes, removal, ownership,
leaving) and an invitation's page (accept signed in, or with a new account). Thin: the
rules are domains/services/members.py's, who may open what is domains/access.py's (through
`project_view`), and a refusal is the service's sentence on the page."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from domains import access
from domains.access import Permission
from domains.choices import Role
from domains.dashboard.lookups import project_view
from domains.models import Invitation, Membership, Project
from domains.policy import INVITATION_VALID
from domains.services import invitations, members

# The backend that signs in an account made on the invitation's page (its password was
# just set, so nothing is checked again).
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


class InviteForm(forms.Form):
    email = forms.EmailField(
        label=gettext_lazy("Email address"),
        max_length=invitations.EMAIL_MAX_LENGTH,
        widget=forms.EmailInput(attrs={"autocomplete": "off"}),
    )
    role = forms.ChoiceField(
        label=gettext_lazy("Role"), choices=Role.choices, initial=Role.DEVELOPER
    )

    def __init__(self, *args, roles: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = roles  # type: ignore[attr-defined]


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=Role.choices)


class NewAccountForm(forms.Form):
    username = forms.CharField(label=gettext_lazy("Username"), max_length=150)
    password1 = forms.CharField(
        label=gettext_lazy("Password"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=gettext_lazy("Password again"),
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self):
        data = super().clean() or {}
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ; type the same one twice."))
        return data


def _roles_for(role: str) -> list[tuple[str, str]]:
    """The roles a member of `role` may give, smallest first."""
    return [(value, str(label)) for value, label in Role.choices if access.manages(role, value)]


@dataclass(frozen=True)
class Row:
    """A member or an invitation as the page shows it: whether the viewer may change it."""

    entry: Membership | Invitation
    manageable: bool
    is_me: bool = False


def _page(request, project: Project, *, invite_form: InviteForm | None = None, status=200):
    mine = project.role

    def manageable(role: str) -> bool:
        return access.allows(mine, Permission.MEMBERS_WRITE) and access.manages(mine, role)

    people = [
        Row(member, manageable(member.role), member.user_id == request.user.pk)
        for member in Membership.objects.filter(project=project).select_related("user")
    ]
    pending = Invitation.objects.pending().filter(project=project).select_related("invited_by")
    roles = _roles_for(mine)
    context = {
        "project": project,
        "role_label": Role(mine).label if mine in Role.values else mine,
        "people": people,
        "invitations": [Row(invitation, manageable(invitation.role)) for invitation in pending],
        "roles": roles,
        "can_invite": access.allows(mine, Permission.MEMBERS_WRITE) and bool(roles),
        "can_own": access.allows(mine, Permission.OWNERS_WRITE),
        "invite_form": invite_form or InviteForm(roles=roles),
        "others": [row.entry for row in people if not row.is_me],
        "days": INVITATION_VALID.days,
    }
    return render(request, "domains/members.html", context, status=status)


def _to_members(project: Project):
    return redirect("dashboard:members", slug=project.slug)


@project_view(Permission.MEMBERS_READ)
@require_http_methods(["GET"])
def members_page(request, project):
    return _page(request, project)


@project_view(Permission.MEMBERS_WRITE)
@require_POST
def member_invite(request, project):
    form = InviteForm(request.POST, roles=_roles_for(project.role))
    if form.is_valid():
        try:
            invited = invitations.member_invite(
                project=project,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                actor=request.user,
            )
        except ValidationError as exc:
            form.add_error("email", exc)
        else:
            messages.success(
                request,
                _("An invitation is on its way to %(email)s.")
                % {"email": invited.invitation.email},
            )
            return _to_members(project)
    return _page(request, project, invite_form=form, status=400)


def _refused(request, project: Project, exc: ValidationError):
    messages.error(request, " ".join(exc.messages))
    return _to_members(project)


@project_view(Permission.MEMBERS_WRITE)
@require_POST
def member_role(request, project, pk):
    member = get_object_or_404(Membership.objects.filter(project=project), pk=pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return _refused(request, project, ValidationError(_("Choose one of the roles.")))
    try:
        changed = members.member_change_role(
            project=project,
            membership_id=member.pk,
            role=form.cleaned_data["role"],
            actor=request.user,
        )
    except ValidationError as exc:
        return _refused(request, project, exc)
    messages.success(
        request,
        _("%(username)s is now %(role)s.")
        % {"username": changed.user.get_username(), "role": Role(changed.role).label},
    )
    return _to_members(project)


@project_view(Permission.MEMBERS_WRITE)
@require_http_methods(["GET", "POST"])
def member_remove(request, project, pk):
    member = get_object_or_404(
        Membership.objects.filter(project=project).select_related("user"), pk=pk
    )
    if request.method == "POST":
        try:
            members.member_remove(project=project, membership_id=member.pk, actor=request.user)
        except ValidationError as exc:
            return _refused(request, project, exc)
        messages.success(
            request,
            _("%(username)s is no member any more.") % {"username": member.user.get_username()},
        )
        if member.user_id == request.user.pk:
            return redirect("dashboard:home")
        return _to_members(project)
    return render(request, "domains/member_remove.html", {"project": project, "member": member})


@project_view(Permission.MEMBERS_WRITE)
@require_POST
def invitation_revoke(request, project, pk):
    invitation = get_object_or_404(Invitation.objects.filter(project=project), pk=pk)
    try:
        invitations.invitation_revoke(
            project=project, invitation_id=invitation.pk, actor=request.user
        )
    except ValidationError as exc:
        return _refused(request, project, exc)
    messages.success(
        request, _("The invitation of %(email)s was revoked.") % {"email": invitation.email}
    )
    return _to_members(project)


@project_view(Permission.OWNERS_WRITE)
@require_POST
def ownership_transfer(request, project):
    member = get_object_or_404(
        Membership.objects.filter(project=project).select_related("user"),
        pk=request.POST.get("member") or 0,
    )
    try:
        members.ownership_transfer(project=project, membership_id=member.pk, actor=request.user)
    except ValidationError as exc:
        return _refused(request, project, exc)
    messages.success(
        request,
        _("%(username)s owns %(project)s now; you are an admin.")
        % {"username": member.user.get_username(), "project": project.name},
    )
    return _to_members(project)


@project_view(Permission.MEMBERS_READ)
@require_http_methods(["GET", "POST"])
def member_leave(request, project):
    if request.method == "POST":
        try:
            members.member_leave(project=project, user=request.user)
        except ValidationError as exc:
            return _refused(request, project, exc)
        messages.success(request, _("You left %(project)s.") % {"project": project.name})
        return redirect("dashboard:home")
    return render(request, "domains/member_leave.html", {"project": project})


def _link_refused(request, exc: ValidationError):
    context = {"refused": " ".join(exc.messages)}
    return render(request, "domains/invitation.html", context, status=400)


@require_http_methods(["GET", "POST"])
def invitation(request, token):
    """The mailed link: who invites to what, then Accept (signed in) or a new account.
    A GET changes nothing (a mail scanner that follows links only GETs)."""
    try:
        invited = invitations.invitation_read(token=token)
    except ValidationError as exc:
        return _link_refused(request, exc)
    account_form = NewAccountForm(request.POST or None)
    status = 200
    if request.method == "POST":
        try:
            if request.user.is_authenticated:
                joined = invitations.invitation_accept(token=token, user=request.user)
            elif account_form.is_valid():
                data = account_form.cleaned_data
                joined = invitations.invitation_accept_new_account(
                    token=token, username=data["username"], password=data["password1"]
                )
                login(request, joined.user, backend=MODEL_BACKEND)
            else:
                joined = None
        except ValidationError as exc:
            if request.user.is_authenticated:
                return _link_refused(request, exc)
            account_form.add_error(None, exc)
            joined = None
        if joined is not None:
            messages.success(
                request,
                _("You joined %(project)s as %(role)s.")
                % {"project": joined.project.name, "role": Role(joined.role).label},
            )
            return redirect("dashboard:project_domains", slug=joined.project.slug)
        status = 400
    context: dict[str, object] = {
        "invited": invited,
        "role": Role(invited.role).label,
        "account_form": account_form,
        "sign_in": reverse("login") + "?next=" + request.path,
    }
    return render(request, "domains/invitation.html", context, status=status)
