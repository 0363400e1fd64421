"""The outbox of release 1.0.0's predecessors leaves the models: the `WebhookDelivery` model
and OwnerEvent's `email_*` fields. No process of 1.0.0 reads or writes them, but its ORM
still names them (a cascade from an endpoint or an event SELECTs the table, an event's
SELECT lists the columns), so the table and the columns stay in the database until 1.2.0
(the markers in domains/models/webhooks.py and domains/models/events.py):

- first, once more, what the processes before 1.0.0 wrote during the rolling deploy into
  1.0.0, after migration 0013 carried the rest, becomes Delivery rows (new ids; ON
  CONFLICT DO NOTHING on (event, channel, target) leaves what is carried already); the
  events 1.0.0 wrote say `skipped` and are left out;
- then the old table is emptied and loses its foreign keys: deleting an endpoint or an
  event no longer cascades to it, and a TRUNCATE of the tables the models know (a test's
  flush) must not find a table that refers to them;
- the columns get database defaults (`skipped`, 0, now()) so an INSERT that leaves them
  out succeeds, and their index, read by no query, is dropped.

Going back restores the fields and the model; the rows carried and deleted stay as they are.
"""

from django.db import migrations, models
from django.db.models.functions import Now

WEBHOOKS = """
INSERT INTO domains_delivery
    (event_id, channel, target_id, state, attempts, next_attempt_at, claim, created_at,
     finished_at)
SELECT d.event_id, 'webhook', d.endpoint_id, d.state, d.attempts, d.next_attempt_at, d.claim,
       d.created_at,
       CASE d.state WHEN 'delivered' THEN d.delivered_at WHEN 'failed' THEN d.attempted_at END
FROM domains_webhookdelivery d
ORDER BY d.id
ON CONFLICT DO NOTHING
"""

WEBHOOK_ATTEMPTS = """
INSERT INTO domains_deliveryattempt
    (delivery_id, attempted_at, ok, status_code, duration_ms, response)
SELECT n.id, d.attempted_at, d.state = 'delivered' OR d.status_code BETWEEN 200 AND 299,
       d.status_code, COALESCE(d.duration_ms, 0), LEFT(d.response, 500)
FROM domains_webhookdelivery d
JOIN domains_delivery n
  ON n.event_id = d.event_id AND n.channel = 'webhook' AND n.target_id = d.endpoint_id
WHERE d.attempted_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM domains_deliveryattempt a WHERE a.delivery_id = n.id)
"""

EMAIL = """
INSERT INTO domains_delivery
    (event_id, channel, target_id, state, attempts, next_attempt_at, claim, created_at,
     finished_at)
SELECT e.id, 'email', e.project_id,
       CASE e.email_state WHEN 'sent' THEN 'delivered' ELSE e.email_state END,
       e.email_attempts, e.email_due_at, e.email_claim, e.occurred_at,
       CASE e.email_state WHEN 'sent' THEN e.emailed_at WHEN 'failed' THEN e.email_due_at END
FROM domains_ownerevent e
WHERE e.email_state <> 'skipped'
ORDER BY e.id
ON CONFLICT DO NOTHING
"""

EMAIL_ATTEMPTS = """
INSERT INTO domains_deliveryattempt
    (delivery_id, attempted_at, ok, status_code, duration_ms, response)
SELECT n.id, e.emailed_at, TRUE, NULL, 0, ''
FROM domains_ownerevent e
JOIN domains_delivery n ON n.event_id = e.id AND n.channel = 'email'
WHERE e.email_state = 'sent' AND e.emailed_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM domains_deliveryattempt a WHERE a.delivery_id = n.id)
"""

EMPTY = "DELETE FROM domains_webhookdelivery"

UNLINK = """
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT conname FROM pg_constraint
        WHERE conrelid = 'domains_webhookdelivery'::regclass AND contype = 'f'
    LOOP
        EXECUTE format('ALTER TABLE domains_webhookdelivery DROP CONSTRAINT %I', name);
    END LOOP;
END $$
"""


def carry_over(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for statement in (WEBHOOKS, WEBHOOK_ATTEMPTS, EMAIL, EMAIL_ATTEMPTS, EMPTY, UNLINK):
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0019_owner_email_changes"),
    ]

    operations = [
        migrations.RunPython(carry_over, migrations.RunPython.noop, elidable=False),
        migrations.RemoveIndex(model_name="ownerevent", name="domains_owner_event_email_due"),
        migrations.AlterField(
            model_name="ownerevent",
            name="email_state",
            field=models.CharField(max_length=10, db_default="skipped"),
        ),
        migrations.AlterField(
            model_name="ownerevent",
            name="email_attempts",
            field=models.PositiveSmallIntegerField(db_default=0),
        ),
        migrations.AlterField(
            model_name="ownerevent",
            name="email_due_at",
            field=models.DateTimeField(db_default=Now()),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="ownerevent", name=name)
                for name in (
                    "email_state",
                    "email_attempts",
                    "email_due_at",
                    "email_claim",
                    "emailed_at",
                )
            ]
            + [migrations.DeleteModel(name="WebhookDelivery")],
        ),
    ]
