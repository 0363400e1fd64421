"""Partial indexes on the few rows each of the sweep's other stages looks for (claims never
verified, certificate work requested, certificates not asked for), so a sweep among many
active domains reads none of them. Built concurrently: the domains table stays writable."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    atomic = False

    dependencies = [
        ("domains", "0030_edge_version_platform_certificate"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="domain",
            index=models.Index(
                condition=models.Q(("verified_at__isnull", True)),
                fields=["created_at"],
                name="domains_never_verified",
            ),
        ),
        AddIndexConcurrently(
            model_name="domain",
            index=models.Index(
                condition=models.Q(("state", "issuing")),
                fields=["cert_requested_at"],
                name="domains_issuing",
            ),
        ),
        AddIndexConcurrently(
            model_name="domain",
            index=models.Index(
                condition=models.Q(("cert_state", "none"), ("state", "verified")),
                fields=["verified_at"],
                name="domains_needing_certificate",
            ),
        ),
    ]
