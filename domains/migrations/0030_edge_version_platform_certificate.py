"""The edge version rises when the platform's own certificate is written too (a PlatformKey row:
its wildcard certificate, renewed over DNS-01), so every edge serves the new one without a
restart. The declarations are copied here, not imported (tests/petstore/test_versions.py holds
the app's equal to the latest)."""

from petstore.database.migrations import LockTimeoutMigration
from petstore.versions import Version, Watch, superseding

BEFORE = Version(
    table="domains_edge_version",
    watches=[
        Watch("domains_certificate", "INSERT OR UPDATE OR DELETE"),
        Watch("domains_domain", "INSERT OR DELETE"),
        Watch("domains_domain", "UPDATE", columns=("state", "hostname")),
    ],
)
EDGE = Version(
    table="domains_edge_version",
    watches=[*BEFORE.watches, Watch("domains_platformkey", "INSERT OR UPDATE OR DELETE")],
)


class Migration(LockTimeoutMigration):
    dependencies = [
        ("domains", "0029_platform_certificate_key_use"),
    ]

    operations = [superseding(BEFORE, EDGE)]
