"""Reading GET /metrics as Prometheus does: the families by name, a sample's value."""

from __future__ import annotations

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "scrape-token-for-tests"  # noqa: S105 - a test value
# Every family the issue names, as Prometheus sees them (counters without `_total`).
FAMILIES = {
    "petstore_domains",
    "petstore_domain_checks",
    "petstore_verify_to_active_seconds",
    "petstore_certificates_expiring",
    "petstore_certificate_renewals",
    "petstore_acme_errors",
    "petstore_queue_depth",
    "petstore_task_failures",
    "petstore_task_retries",
    "petstore_edge_certificate_lookups",
    "petstore_edge_certificate_lookup_seconds",
    "petstore_http_requests",
    "petstore_http_request_duration_seconds",
    "petstore_sweep_last_success_timestamp_seconds",
    "petstore_webhook_delivery_attempts",
    "petstore_email_deliveries",
    "petstore_build_info",
    "petstore_backup_last_success_timestamp_seconds",
}


class Scrape:
    def __init__(self, text: str) -> None:
        self.text = text
        self.families: dict[str, Metric] = {
            family.name: family for family in text_string_to_metric_families(text)
        }

    def value(self, sample: str, **labels: str) -> float:
        """The sample's value; 0 when that series was never counted."""
        for family in self.families.values():
            for each in family.samples:
                if each.name == sample and each.labels == labels:
                    return each.value
        return 0.0
