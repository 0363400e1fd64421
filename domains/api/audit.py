"""A project's audit log, newest first (`GET /v1/projects/{slug}/audit-log`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from domains.access import Permission
from domains.api import openapi
from domains.api.shortcuts import DomainsAPIView
from domains.filters import AuditEntryFilter
from domains.models import ActorType, AuditEntry
from petstore.api import openapi as platform_openapi


class ActorSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=ActorType.choices)
    username = serializers.CharField(
        allow_null=True, help_text="The member or staff user; null for the platform."
    )
    key_prefix = serializers.CharField(
        allow_null=True, help_text="The API key's prefix, for a change made with a key."
    )


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()
    changes = serializers.DictField(
        child=serializers.ListField(min_length=2, max_length=2),
        help_text="Each changed field: `[before, after]` (null where a side does not exist).",
    )
    ip = serializers.IPAddressField(allow_null=True)

    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "action", "target", "changes", "ip", "request_id"]

    @extend_schema_field(ActorSerializer)
    def get_actor(self, entry: AuditEntry) -> dict[str, Any]:
        return actor_data(entry)


def actor_data(entry: AuditEntry) -> dict[str, Any]:
    return {
        "type": entry.actor_type,
        "username": entry.actor_username or None,
        "key_prefix": entry.actor_key_prefix or None,
    }


# The FilterSet's filters as query parameters, each with its help text and values.
_FILTERS = [
    OpenApiParameter(
        name,
        OpenApiTypes.DATETIME if name in ("since", "until") else OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        description=str(field.extra.get("help_text", "")),
        enum=[value for value, _ in field.extra["choices"]] if "choices" in field.extra else None,
    )
    for name, field in AuditEntryFilter.base_filters.items()
]
_LISTED = openapi.listed(
    "Every change to the project, newest first: who (`actor`), what (`action`, `target`, "
    "`changes`), when, from where (`ip`, `request_id`).",
    AuditEntrySerializer,
)
_LISTED["parameters"] = [*_LISTED["parameters"], *_FILTERS]
_LISTED["responses"][403] = platform_openapi.error(
    "insufficient_scope: the key lacks `audit:read`; forbidden: the member's role may not "
    "see the audit log."
)


class AuditLogView(DomainsAPIView):
    permissions = {"GET": Permission.AUDIT_READ}

    @extend_schema(
        operation_id="listAuditLog",
        summary="List a project's audit log",
        tags=[openapi.TAG],
        **_LISTED,
    )
    def get(self, request: Request, slug: str) -> Response:
        found = AuditEntryFilter(
            request.query_params, queryset=AuditEntry.objects.filter(project_id=self.project.pk)
        )
        if not found.is_valid():
            raise ValidationError(found.errors)
        return self.page(request, found.qs.order_by("-id"), AuditEntrySerializer, newest_first=True)
