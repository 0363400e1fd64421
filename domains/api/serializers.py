"""Input serializers validate the shape of a request; output serializers shape the answer
(and the OpenAPI schemas). The rules (a valid name, the plan, a redirect's target) are
the services'; a field here only says what type a value has."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from domains.choices import (
    DeliveryState,
    EventType,
    FindingCode,
    Plan,
    RedirectStatus,
    State,
)
from domains.dns import hostnames
from domains.models import Delivery, DeliveryAttempt, Domain, WebhookEndpoint
from domains.webhooks.address import MAX_URL_LENGTH

# A generous bound on what is read: the service says what is wrong with the name itself
# (too long, blank, ...), in the sentence the dashboard shows.
_HOSTNAME_READ_MAX = 4 * hostnames.MAX_HOSTNAME_LENGTH

_STATUSES = ", ".join(map(str, RedirectStatus.values))

# --- input -------------------------------------------------------------------------


class NewDomainSerializer(serializers.Serializer):
    hostname = serializers.CharField(
        max_length=_HOSTNAME_READ_MAX,
        allow_blank=True,
        help_text="The name to add, e.g. shop.example.com (Unicode allowed).",
    )


class PrimaryDomainSerializer(serializers.Serializer):
    hostname = serializers.CharField(
        max_length=_HOSTNAME_READ_MAX,
        allow_blank=True,
        help_text="One of the project's domains; it must not redirect.",
    )


class _FromField:
    """`from` is a Python keyword: the field is added under that name at construction."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()  # type: ignore[misc]
        return {"from": self.from_field(), **fields}

    def from_field(self) -> serializers.Field:
        raise NotImplementedError


class NewRedirectSerializer(_FromField, serializers.Serializer):
    to = serializers.CharField(
        max_length=_HOSTNAME_READ_MAX, allow_blank=True, help_text="A live domain of the project."
    )
    # An integer, not an enum: the service refuses another status (`invalid_status`) with
    # the sentence the dashboard shows.
    status = serializers.IntegerField(
        default=RedirectStatus.MOVED_PERMANENTLY, help_text=f"The HTTP status: {_STATUSES}."
    )

    def from_field(self) -> serializers.Field:
        return serializers.CharField(
            max_length=_HOSTNAME_READ_MAX,
            allow_blank=True,
            help_text="The domain that redirects (one of the project's).",
        )


# --- output ------------------------------------------------------------------------


class ProjectSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    plan = serializers.ChoiceField(choices=Plan.choices)
    primary_domain = serializers.CharField(
        source="primary_domain.hostname",
        allow_null=True,
        default=None,
        help_text="The host name the project is served under; null: its platform address.",
    )


class DnsRecordSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="CNAME, ALIAS, ANAME or TXT.")
    name = serializers.CharField(help_text="Relative to the registrable domain (`@`: itself).")
    value = serializers.CharField()
    ttl = serializers.IntegerField()
    note = serializers.CharField()


class CheckSerializer(serializers.Serializer):
    """What the last DNS check found, and when the next one runs."""

    code = serializers.CharField(source="check_code", help_text="Empty before the first check.")
    message = serializers.CharField(source="check_message")
    expected = serializers.CharField(source="check_expected")
    found = serializers.CharField(source="check_found")
    last_checked_at = serializers.DateTimeField(source="checked_at", allow_null=True)
    next_check_at = serializers.DateTimeField(allow_null=True)
    in_progress = serializers.BooleanField(source="check_in_progress")
    failing_since = serializers.DateTimeField(allow_null=True)
    stops_serving_at = serializers.SerializerMethodField(
        help_text="A live domain whose check fails stops serving then, unless fixed."
    )

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_stops_serving_at(self, domain: Domain) -> str | None:
        when = domain.stops_serving_at()
        return serializers.DateTimeField().to_representation(when) if when else None


class NameserverAnswerSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="A name server of the zone (its NS record).")
    address = serializers.CharField(help_text="The address asked; empty when it has none.")
    answer = serializers.CharField(
        help_text="What it answered, as a person reads it: `CNAME cname.example.net.`, "
        "`A 192.0.2.1, AAAA 2001:db8::1`, `no record`, `no answer`."
    )
    ttl = serializers.IntegerField(allow_null=True, help_text="Its records' TTL, in seconds.")
    agrees = serializers.BooleanField(help_text="Whether it gives what the platform needs.")


class FindingSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=FindingCode.choices)
    message = serializers.CharField(help_text="What it means and what to do, for a person.")
    nameservers = serializers.ListField(
        child=serializers.CharField(), help_text="The name servers it is about."
    )
    records = serializers.ListField(
        child=serializers.CharField(), help_text="The records it is about (`AAAA 2001:db8::1`)."
    )


class DiagnosisSerializer(serializers.Serializer):
    """What each of the zone's own name servers said at the last check that asked them
    (every check of a domain not live yet; a live domain's failing ones)."""

    checked_at = serializers.DateTimeField()
    nameservers = NameserverAnswerSerializer(many=True)
    findings = FindingSerializer(
        many=True, help_text="Empty when every name server gives what the platform needs."
    )


class CertificateSerializer(serializers.Serializer):
    """The certificate served now (the newest valid one)."""

    issuer = serializers.CharField()
    serial = serializers.CharField()
    not_before = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(source="not_after")
    renew_after = serializers.DateTimeField(help_text="When its renewal is due.")


class CertificateStatusSerializer(serializers.Serializer):
    state = serializers.CharField(
        source="cert_state", help_text="none, requested, issued, blocked."
    )
    code = serializers.CharField(source="cert_code")
    message = serializers.CharField(source="cert_message")


class ClaimSerializer(serializers.Serializer):
    contested = serializers.BooleanField(
        help_text=(
            "Another project claims, or proved, this name: the TXT record in `dns_records` "
            "must prove it is yours."
        )
    )


class DomainSummarySerializer(serializers.Serializer):
    hostname = serializers.CharField()
    hostname_unicode = serializers.CharField()
    state = serializers.ChoiceField(choices=State.choices)
    is_live = serializers.BooleanField()
    verified_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class DomainSerializer(DomainSummarySerializer):
    """A domain as its page shows it. `context["contested"]` says whether its claim needs
    the TXT proof (selectors.is_contested), read once by the view."""

    check = CheckSerializer(source="*")
    diagnosis = DiagnosisSerializer(
        source="check_diagnosis",
        allow_null=True,
        help_text="Null until a check asks the zone's own name servers.",
    )
    dns_records = serializers.SerializerMethodField()
    certificate = CertificateSerializer(allow_null=True)
    certificate_status = CertificateStatusSerializer(source="*")
    claim = serializers.SerializerMethodField()
    redirects_to = serializers.CharField(
        source="redirect_target.hostname", allow_null=True, default=None
    )
    is_primary = serializers.SerializerMethodField()

    @extend_schema_field(DnsRecordSerializer(many=True))
    def get_dns_records(self, domain: Domain) -> list[dict[str, Any]]:
        return domain.dns_records(contested=self.context["contested"])

    @extend_schema_field(ClaimSerializer)
    def get_claim(self, domain: Domain) -> dict[str, Any]:
        return {"contested": self.context["contested"]}

    def get_is_primary(self, domain: Domain) -> bool:
        return domain.project.primary_domain_id == domain.pk


class RedirectSerializer(_FromField, serializers.Serializer):
    id = serializers.IntegerField()
    to = serializers.CharField(source="to_domain.hostname")
    status = serializers.IntegerField(help_text=f"The HTTP status: {_STATUSES}.")
    created_at = serializers.DateTimeField()

    def from_field(self) -> serializers.Field:
        return serializers.CharField(source="from_domain.hostname")


# --- webhooks ------------------------------------------------------------------------


class NewWebhookSerializer(serializers.Serializer):
    url = serializers.CharField(
        max_length=MAX_URL_LENGTH,
        help_text="The HTTPS address that receives the events (public addresses only).",
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices),
        allow_empty=False,
        max_length=len(EventType.values),
        help_text="The event types to send.",
    )


class WebhookSerializer(serializers.ModelSerializer):
    events = serializers.ListField(child=serializers.ChoiceField(choices=EventType.choices))
    enabled = serializers.BooleanField(help_text="False once disabled after failing for days.")

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "events", "enabled", "created_at", "disabled_at", "failing_since"]


class NewWebhookAnswerSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text=(
            "The signing secret (`whsec_…`), shown in this answer only: keep it to verify "
            "the `webhook-signature` header."
        )
    )

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]


class DeliveryAttemptSerializer(serializers.ModelSerializer):
    status_code = serializers.IntegerField(
        allow_null=True, help_text="The receiver's HTTP status; null when it did not answer."
    )
    response = serializers.CharField(
        help_text="The answer's first 500 characters, or why there was none."
    )

    class Meta:
        model = DeliveryAttempt
        fields = ["attempted_at", "ok", "status_code", "duration_ms", "response"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.CharField(
        source="message_id", help_text="The `webhook-id` header: the same on every attempt."
    )
    event_type = serializers.ChoiceField(source="event.type", choices=EventType.choices)
    state = serializers.ChoiceField(choices=DeliveryState.choices)
    status_code = serializers.IntegerField(
        source="last_attempt.status_code",
        allow_null=True,
        default=None,
        help_text="The last attempt's HTTP status.",
    )
    duration_ms = serializers.IntegerField(
        source="last_attempt.duration_ms", allow_null=True, default=None
    )
    response = serializers.CharField(
        source="last_attempt.response",
        default="",
        help_text="The first bytes of the last answer, or why none.",
    )
    attempted_at = serializers.DateTimeField(
        source="last_attempt.attempted_at", allow_null=True, default=None
    )
    delivered_at = serializers.SerializerMethodField()
    attempt_log = DeliveryAttemptSerializer(many=True, help_text="Every attempt, oldest first.")

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "state",
            "attempts",
            "status_code",
            "duration_ms",
            "response",
            "created_at",
            "attempted_at",
            "next_attempt_at",
            "delivered_at",
            "attempt_log",
        ]

    # Written as every other time of the API is (…Z), not as a bare datetime's isoformat().
    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_delivered_at(self, delivery: Delivery) -> str | None:
        if delivery.state != DeliveryState.DELIVERED or delivery.finished_at is None:
            return None
        return serializers.DateTimeField().to_representation(delivery.finished_at)
