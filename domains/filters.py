"""The audit log's one FilterSet, read by the API (`GET .../audit-log`) and the dashboard's
page alike: the same names, the same values, the same refusals."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from domains.choices import AuditAction
from domains.models import ActorType, AuditEntry


class AuditEntryFilter(django_filters.FilterSet):
    actor = django_filters.CharFilter(
        method="by_actor",
        max_length=150,
        help_text="Only the changes of this username, or of the API key with this prefix.",
    )
    actor_type = django_filters.ChoiceFilter(
        choices=ActorType.choices, help_text="Only the changes of this kind of actor."
    )
    action = django_filters.ChoiceFilter(
        choices=AuditAction.choices, help_text="Only the changes of this action."
    )
    since = django_filters.IsoDateTimeFilter(
        field_name="at",
        lookup_expr="gte",
        help_text="Only the changes at or after this time (ISO 8601; a date is its midnight).",
    )
    until = django_filters.IsoDateTimeFilter(
        field_name="at",
        lookup_expr="lt",
        help_text="Only the changes before this time (ISO 8601; a date is its midnight).",
    )

    class Meta:
        model = AuditEntry
        fields = ["actor", "actor_type", "action", "since", "until"]

    def by_actor(
        self, queryset: QuerySet[AuditEntry], name: str, value: str
    ) -> QuerySet[AuditEntry]:
        return queryset.filter(Q(actor_username=value) | Q(actor_key_prefix=value))
