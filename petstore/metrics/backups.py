"""petstore_backup_last_success_timestamp_seconds{kind}: when each kind of backup last
finished, read from the database at scrape time (BackupSuccess, written by the backup), so
every web process reports the same time whichever host took the backup."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from petstore.models import BackupSuccess


class BackupCollector:
    """petstore_backup_last_success_timestamp_seconds{kind}: 0 for a kind never taken, so an
    installation that never backed up reads as stale as one whose backups stopped."""

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "petstore_backup_last_success_timestamp_seconds",
            "When a backup of each kind last finished (Unix time; 0: never): `pgbackrest`, "
            "the base backup of point-in-time recovery; `logical`, manage.py backup's copy.",
            labels=["kind"],
        )
        finished = dict(BackupSuccess.objects.values_list("kind", "finished_at"))
        for kind in BackupSuccess.Kind:
            when = finished.get(kind.value)
            family.add_metric([kind.value], when.timestamp() if when else 0.0)
        yield family
