"""What a restored database needs before the platform starts on it again: no session of the
time before, no id handed out a second time, no message of the lost future in the broker.

Why and how: docs/adr/0021-point-in-time-recovery-and-ids-never-reused.md. In short:
a restore to a point in time brings every sequence back to where it stood then, and the ids
handed out since (rows the restore dropped, but that clients, webhooks and mails have seen)
would be handed out again to other rows. The database being replaced still knows how far each
sequence went: with the platform stopped, `take_marks` writes that down (the marks file, in
PETSTORE_VAR_DIR, outside the database the restore replaces); `after_restore` moves each
sequence past the largest of its mark, its restored value and its column's largest id, plus a
margin. Without marks (the old cluster is lost) the operator gives the margin, and it
is theirs to make larger than the rows made between the target and the loss.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.utils import timezone

from petstore.backups.records import BackupError
from petstore.celery import app as celery_app

# Added past the highest id known, for anything that escaped the marks (there should be
# nothing: `take_marks` refuses while another session is connected). Ids are 64-bit.
DEFAULT_GAP = 1000
MARKS_FILE = "id-marks.json"

# Every sequence of the database outside the system's schemas, with the column it fills
# (a serial's or an identity's), each name quoted for SQL.
SEQUENCES = """
SELECT format('%I.%I', ns.nspname, seq.relname),
       CASE WHEN col.attname IS NOT NULL THEN format('%I.%I', tns.nspname, tab.relname) END,
       CASE WHEN col.attname IS NOT NULL THEN quote_ident(col.attname) END
FROM pg_class seq
JOIN pg_namespace ns ON ns.oid = seq.relnamespace
LEFT JOIN pg_depend dep ON dep.classid = 'pg_class'::regclass AND dep.objid = seq.oid
    AND dep.refclassid = 'pg_class'::regclass AND dep.deptype IN ('a', 'i')
LEFT JOIN pg_class tab ON tab.oid = dep.refobjid
LEFT JOIN pg_namespace tns ON tns.oid = tab.relnamespace
LEFT JOIN pg_attribute col ON col.attrelid = dep.refobjid AND col.attnum = dep.refobjsubid
WHERE seq.relkind = 'S' AND ns.nspname NOT IN ('pg_catalog', 'information_schema')
    AND ns.nspname NOT LIKE 'pg\\_%'
ORDER BY 1
"""


@dataclass(frozen=True)
class Sequence:
    name: str
    table: str | None
    column: str | None


@dataclass
class Report:
    sessions_ended: int = 0
    moved: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    broker_keys_flushed: int = 0


def marks_path() -> Path:
    return Path(settings.VAR_DIR) / MARKS_FILE


def sequences() -> list[Sequence]:
    with connection.cursor() as cursor:
        cursor.execute(SEQUENCES)
        return [Sequence(*row) for row in cursor.fetchall()]


def handed_out(sequence: Sequence) -> int | None:
    """The last value the sequence handed out, None when it has handed out none."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT last_value, is_called FROM {sequence.name}")  # noqa: S608 (quoted by format())
        last_value, is_called = cursor.fetchone()
    return last_value if is_called else None


def largest_id(sequence: Sequence) -> int | None:
    if not sequence.column:
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT max({sequence.column})::bigint FROM {sequence.table}")  # noqa: S608
        return cursor.fetchone()[0]


def other_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        return cursor.fetchone()[0]


def read_marks(path: Path) -> dict[str, int]:
    try:
        listed = json.loads(path.read_text())["sequences"]
        return {name: int(value) for name, value in listed.items()}
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError) as exc:
        raise BackupError(f"{path} is not a marks file of manage.py idmarks ({exc}).") from None


def take_marks(path: Path) -> dict[str, int]:
    """Write how far each sequence went into `path` (0600), merged with the marks already
    there (a restore tried before: marks only go up); the marks."""
    others = other_sessions()
    if others:
        raise BackupError(
            f"{others} other session(s) are connected to the database: stop the platform on "
            "every host first (systemctl stop petstore.target), so that no id is handed out "
            "after the marks."
        )
    marks = read_marks(path)
    for sequence in sequences():
        value = handed_out(sequence)
        if value is not None:
            marks[sequence.name] = max(value, marks.get(sequence.name, value))
    document = {
        "database": connection.settings_dict["NAME"],
        "taken_at": timezone.now().isoformat(),
        "sequences": marks,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
        json.dump(document, file, indent=2, sort_keys=True)
        file.write("\n")
        file.flush()
        os.fsync(file.fileno())
    partial.replace(path)
    return marks


def flush_broker() -> int:
    """Empty the broker's database: its messages were queued in a future the restore undid
    (the sweep queues again what the restored rows still need); the keys there were."""
    with celery_app.connection_for_write(settings.CELERY_BROKER_URL) as broker:
        broker.ensure_connection(max_retries=1, timeout=10)
        # kombu's Redis channel's own client, on the broker's database; kombu's stubs
        # leave it out.
        client = broker.default_channel.client  # type: ignore[attr-defined]
        keys = client.dbsize()
        client.flushdb()
    return keys


def after_restore(*, marks_file: Path, gap: int | None = None) -> Report:
    """End every session, move every sequence past every id handed out, empty the broker;
    the marks file is used once, then removed."""
    marks = read_marks(marks_file)
    if not marks and gap is None:
        raise BackupError(
            f"No id marks at {marks_file} (manage.py idmarks, before the restore): if the "
            "database before the restore is lost, give --gap N, N larger than the rows the "
            "platform may have made between the target time and the loss."
        )
    margin = DEFAULT_GAP if gap is None else gap
    report = Report()
    with transaction.atomic():
        report.sessions_ended = Session.objects.count()
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {connection.ops.quote_name(Session._meta.db_table)}")
            for sequence in sequences():
                before = handed_out(sequence)
                known = [before, marks.get(sequence.name), largest_id(sequence)]
                after = max((value for value in known if value is not None), default=0) + margin
                if after > 0 and (before is None or after > before):
                    cursor.execute("SELECT setval(%s::regclass, %s, true)", [sequence.name, after])
                    report.moved[sequence.name] = (before, after)
    report.broker_keys_flushed = flush_broker()
    marks_file.unlink(missing_ok=True)
    return report
