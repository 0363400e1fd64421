"""Email deliveries name a membership, no longer a project: each project's events are
mailed to every owner and admin (domains/channels/email.py). The rows made before were for
the project's owner (the `owner` column), so each becomes that owner's membership's; a row
of a project without one names no membership (0), and is skipped if it still waited."""

from django.db import migrations

from petstore.database.migrations import LockTimeoutMigration

FORWARDS = """
WITH mapped AS (
  SELECT d.id, m.id AS member
    FROM domains_delivery d
    JOIN domains_project p ON p.id = d.target_id
    LEFT JOIN domains_membership m ON m.project_id = p.id AND m.user_id = p.owner_id
   WHERE d.channel = 'email'
)
UPDATE domains_delivery d
   SET target_id = COALESCE(mapped.member, 0),
       state = CASE WHEN mapped.member IS NULL AND d.state IN ('pending', 'sending')
                    THEN 'skipped' ELSE d.state END,
       finished_at = CASE WHEN mapped.member IS NULL
                          THEN COALESCE(d.finished_at, now()) ELSE d.finished_at END,
       claim = CASE WHEN mapped.member IS NULL THEN NULL ELSE d.claim END
  FROM mapped
 WHERE d.id = mapped.id;
"""
# Back to one row per event, the project's: the owner column's member's row, or else the
# earliest.
BACKWARDS = """
DELETE FROM domains_delivery d
 WHERE d.channel = 'email' AND EXISTS (
   SELECT 1 FROM domains_delivery o
    WHERE o.event_id = d.event_id AND o.channel = 'email' AND o.id < d.id);
UPDATE domains_delivery d SET target_id = m.project_id
  FROM domains_membership m
 WHERE d.channel = 'email' AND d.target_id = m.id;
UPDATE domains_delivery d SET target_id = e.project_id
  FROM domains_ownerevent e
 WHERE d.channel = 'email' AND d.target_id = 0 AND e.id = d.event_id;
"""


class Migration(LockTimeoutMigration):
    dependencies = [("domains", "0022_audit_append_only")]

    operations = [migrations.RunSQL(FORWARDS, BACKWARDS)]
