"""Each backup that finishes is recorded, and every web process reports the newest of each
kind as petstore_backup_last_success_timestamp_seconds (0: never), which PetstoreBackupStale
watches."""

from __future__ import annotations

from django.utils import timezone

from petstore.backups.records import backup_succeeded
from petstore.models import BackupSuccess
from tests.petstore.metrics.scrape import TOKEN, Scrape

FAMILY = "petstore_backup_last_success_timestamp_seconds"


def scrape(client, settings) -> Scrape:
    settings.METRICS_TOKEN = TOKEN
    response = client.get(
        "/metrics", HTTP_HOST="10.1.2.3:8000", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"
    )
    assert response.status_code == 200
    return Scrape(response.content.decode())


def test_a_kind_never_taken_reads_0_and_a_finished_backup_its_time(db, client, settings):
    never = scrape(client, settings)
    assert never.value(FAMILY, kind="pgbackrest") == never.value(FAMILY, kind="logical") == 0
    before = timezone.now().timestamp()
    backup_succeeded(kind=BackupSuccess.Kind.BASE, detail="full of stanza petstore")
    after = scrape(client, settings)
    assert before <= after.value(FAMILY, kind="pgbackrest") <= timezone.now().timestamp()
    assert after.value(FAMILY, kind="logical") == 0


def test_the_newest_backup_of_a_kind_replaces_the_one_before(db):
    first = backup_succeeded(kind=BackupSuccess.Kind.LOGICAL, detail="a.dump")
    second = backup_succeeded(kind=BackupSuccess.Kind.LOGICAL, detail="b.dump")
    assert list(BackupSuccess.objects.values_list("kind", "detail")) == [("logical", "b.dump")]
    assert second.finished_at >= first.finished_at
