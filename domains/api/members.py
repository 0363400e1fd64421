"""The domains API's members: a project's members and open invitations, invitations by
email, role changes and removal, under the Members tag. The same services as the dashboard
and the commands (domains/services/members.py), so a refusal has the same sentence and code.

Ids: a member is `mem_<n>` and an open invitation `inv_<n>`, two id spaces in one list, so
`DELETE .../members/{id}` removes a member or revokes an invitation by the id the list gave,
and an id of one kind is never taken for the other.
"""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from domains.access import Permission
from domains.api import openapi
from domains.api.shortcuts import DomainsAPIView, user
from domains.choices import Role
from domains.models import Invitation, Membership, Project
from domains.policy import INVITATION_VALID
from domains.services import invitations, members
from petstore.api import idempotency, ids
from petstore.api import openapi as platform_openapi

TAG = "Members"
MEMBER = "mem"
INVITATION = "inv"
_ID = re.compile(r"(mem|inv)_([0-9]{1,19})")

MEMBER_ID = OpenApiParameter(
    "id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="A member's id (`mem_…`) or, for DELETE, an open invitation's (`inv_…`).",
)


class MemberSerializer(serializers.Serializer):
    """A member (`state` active) or an open invitation (`state` pending)."""

    id = serializers.CharField(help_text="`mem_…` for a member, `inv_…` for an invitation.")
    username = serializers.CharField(allow_null=True, help_text="A member's; null if pending.")
    email = serializers.CharField(allow_null=True, help_text="A pending invitation's address.")
    role = serializers.ChoiceField(choices=Role.choices)
    state = serializers.ChoiceField(choices=[("active", "Member"), ("pending", "Invited")])
    since = serializers.DateTimeField(help_text="When they joined, or were invited.")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="A pending invitation's end; null for a member."
    )


class NewMemberSerializer(serializers.Serializer):
    email = serializers.CharField(max_length=invitations.EMAIL_MAX_LENGTH)
    role = serializers.ChoiceField(choices=Role.choices)


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


def member_data(member: Membership) -> dict[str, Any]:
    return {
        "id": f"{MEMBER}_{member.pk}",
        "username": member.user.get_username(),
        "email": None,
        "role": member.role,
        "state": "active",
        "since": member.created_at,
        "expires_at": None,
    }


def invitation_data(invitation: Invitation) -> dict[str, Any]:
    return {
        "id": f"{INVITATION}_{invitation.pk}",
        "username": None,
        "email": invitation.email,
        "role": invitation.role,
        "state": "pending",
        "since": invitation.created_at,
        "expires_at": invitation.expires_at,
    }


def people_data(project: Project) -> list[dict[str, Any]]:
    """The project's members, then its open invitations, each oldest first."""
    found = Membership.objects.filter(project=project).select_related("user")
    pending = Invitation.objects.pending().filter(project=project)
    return [member_data(m) for m in found] + [invitation_data(i) for i in pending]


def _parsed(project: Project, raw: str) -> tuple[str, int]:
    found = _ID.fullmatch(raw)
    pk = ids.int64(found[2]) if found else None
    if found is None or pk is None:
        raise NotFound(f"No member {raw!r} in project {project.slug!r}.")
    return found[1], pk


def _member_in(project: Project, raw: str) -> Membership:
    kind, pk = _parsed(project, raw)
    member = Membership.objects.filter(project=project, pk=pk).first() if kind == MEMBER else None
    if member is None:
        raise NotFound(f"No member {raw!r} in project {project.slug!r}.")
    return member


class MembersView(DomainsAPIView):
    permissions = {"GET": Permission.MEMBERS_READ, "POST": Permission.MEMBERS_WRITE}

    @extend_schema(
        operation_id="listMembers",
        summary="List a project's members and open invitations",
        tags=[TAG],
        description=(
            "Every member (`state` active, with `username`), then every invitation not yet "
            "accepted, revoked or expired (`state` pending, with `email`). A bare array, "
            "not paged: a project's people are few."
        ),
        parameters=[openapi.SLUG, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(MemberSerializer(many=True), description="The members."),
            **openapi.COMMON,
            403: platform_openapi.error("forbidden / insufficient_scope."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(MemberSerializer(people_data(self.project), many=True).data)

    @extend_schema(
        operation_id="inviteMember",
        summary="Invite someone by email",
        tags=[TAG],
        description=(
            f"Mails a link that works once, for {INVITATION_VALID.days} days: its holder signs "
            "in or creates an account, and joins with `role`. An open invitation of the "
            "same address is replaced. An admin invites admins, developers and viewers; "
            "an owner, owners too. Invitations are limited per project per hour (429 "
            "`invite_limit`)."
        ),
        request=NewMemberSerializer,
        parameters=platform_openapi.creating(openapi.SLUG),
        responses={
            201: OpenApiResponse(MemberSerializer, description="The invitation (pending)."),
            400: openapi.refusal(
                "validation_error: the body is not `{email, role}`; invalid_email; bad_request."
            ),
            **openapi.COMMON,
            403: openapi.refusal(
                "role_not_allowed: your role may not give this role; forbidden; insufficient_scope."
            ),
            502: openapi.refusal(
                "invitation_not_sent: the mail server refused the invitation's mail, which "
                "is taken back; try again in a few minutes."
            ),
            **platform_openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = self.project
        body = self.json_object(request)

        def invite() -> idempotency.Answer:
            data = self.valid(NewMemberSerializer, body)
            invited = self.service(
                lambda: invitations.member_invite(
                    project=project, email=data["email"], role=data["role"], actor=user(request)
                )
            )
            answer = MemberSerializer(invitation_data(invited.invitation)).data
            return self.created(answer, "api-member", slug=project.slug, id=answer["id"])

        return idempotency.run(request, body, invite)


class MemberDetailView(DomainsAPIView):
    permissions = {
        "GET": Permission.MEMBERS_READ,
        "PATCH": Permission.MEMBERS_WRITE,
        "DELETE": Permission.MEMBERS_WRITE,
    }

    @extend_schema(
        operation_id="getMember",
        summary="Get a member or an open invitation",
        tags=[TAG],
        parameters=[openapi.SLUG, MEMBER_ID, *platform_openapi.ERROR_HEADERS],
        responses={200: MemberSerializer, **openapi.COMMON},
    )
    def get(self, request: Request, slug: str, id: str) -> Response:
        for entry in people_data(self.project):
            if entry["id"] == id:
                return Response(MemberSerializer(entry).data)
        raise NotFound(f"No member {id!r} in project {self.project.slug!r}.")

    @extend_schema(
        operation_id="changeMemberRole",
        summary="Change a member's role",
        tags=[TAG],
        description=(
            "`owner` makes another owner; changing an owner's role, or making one, needs the "
            "`owner` role. The last owner cannot be demoted (409 `last_owner`)."
        ),
        request=RoleSerializer,
        parameters=[openapi.SLUG, MEMBER_ID, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(MemberSerializer, description="The member, as changed."),
            400: openapi.refusal("validation_error: the body is not `{role}`; bad_request."),
            **openapi.COMMON,
            403: openapi.refusal("role_not_allowed; forbidden; insufficient_scope."),
            409: openapi.refusal("last_owner: the project's only owner."),
            **platform_openapi.BODY_ERRORS,
        },
    )
    def patch(self, request: Request, slug: str, id: str) -> Response:
        member = _member_in(self.project, id)
        role = self.valid(RoleSerializer, self.json_object(request))["role"]
        changed = self.service(
            lambda: members.member_change_role(
                project=self.project, membership_id=member.pk, role=role, actor=user(request)
            )
        )
        return Response(MemberSerializer(member_data(changed)).data)

    @extend_schema(
        operation_id="removeMember",
        summary="Remove a member, or revoke an invitation",
        tags=[TAG],
        description=(
            "A member (`mem_…`) is removed: their next request, signed in or with a key, "
            "finds nothing of the project. An open invitation (`inv_…`) is revoked: its "
            "link stops working. The last owner cannot be removed (409 `last_owner`)."
        ),
        parameters=[openapi.SLUG, MEMBER_ID, *platform_openapi.ERROR_HEADERS],
        responses={
            204: OpenApiResponse(description="Removed or revoked."),
            **openapi.COMMON,
            403: openapi.refusal("role_not_allowed; forbidden; insufficient_scope."),
            409: openapi.refusal("last_owner: the project's only owner."),
        },
    )
    def delete(self, request: Request, slug: str, id: str) -> Response:
        project, actor = self.project, user(request)
        kind, pk = _parsed(project, id)
        if kind == INVITATION:
            if not Invitation.objects.pending().filter(project=project, pk=pk).exists():
                raise NotFound(f"No member {id!r} in project {project.slug!r}.")
            self.service(
                lambda: invitations.invitation_revoke(
                    project=project, invitation_id=pk, actor=actor
                )
            )
            return Response(status=status.HTTP_204_NO_CONTENT)
        member = _member_in(project, id)
        self.service(
            lambda: members.member_remove(project=project, membership_id=member.pk, actor=actor)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
