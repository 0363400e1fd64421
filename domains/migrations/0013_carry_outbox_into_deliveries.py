"""Every outbox row of the previous release becomes a Delivery, none lost:

- each WebhookDelivery, with its id (a deliver_webhook message still queued names the
  same delivery), its state, attempts, lease or next attempt, and its last attempt as the
  first row of its attempt log (the previous release kept no other);
- each OwnerEvent's email progress (`email_*`): an email Delivery to its project, in its
  state (sent becomes delivered, with an attempt at `emailed_at`), so the mails still
  waiting go out, the failed ones stay failed, and "told today" and the domain page's
  "last told" read the same past.

Plain SQL (PostgreSQL, the only database here), set-based, and idempotent: ON CONFLICT
DO NOTHING on (event, channel, target), so the release that drops the old table and
columns runs CARRY_OVER once more, without the webhook ids, to take what the previous
release's workers wrote during the rolling deploy. Going back leaves the old rows as they
were at the upgrade (what was sent since is not written back).
"""

from django.db import migrations

WEBHOOKS = """
INSERT INTO domains_delivery
    ({id_column} event_id, channel, target_id, state, attempts, next_attempt_at, claim,
     created_at, finished_at)
SELECT {id_value} d.event_id, 'webhook', d.endpoint_id, d.state, d.attempts, d.next_attempt_at,
       d.claim, d.created_at,
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

SEQUENCE = """
SELECT setval(
    pg_get_serial_sequence('domains_delivery', 'id'),
    GREATEST((SELECT MAX(id) FROM domains_delivery), 1)
)
"""

EMAIL = """
INSERT INTO domains_delivery
    (event_id, channel, target_id, state, attempts, next_attempt_at, claim, created_at,
     finished_at)
SELECT e.id, 'email', e.project_id,
       CASE e.email_state WHEN 'sent' THEN 'delivered' ELSE e.email_state END,
       e.email_attempts, e.email_due_at, e.email_claim, e.occurred_at,
       CASE e.email_state WHEN 'sent' THEN e.emailed_at
                          WHEN 'skipped' THEN e.occurred_at
                          WHEN 'failed' THEN e.email_due_at END
FROM domains_ownerevent e
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

# What this release runs: the webhook rows keep their ids.
FIRST = [
    WEBHOOKS.format(id_column="id,", id_value="d.id,"),
    WEBHOOK_ATTEMPTS,
    SEQUENCE,
    EMAIL,
    EMAIL_ATTEMPTS,
]
# What the release that drops the old table and columns runs first: new ids.
CARRY_OVER = [
    WEBHOOKS.format(id_column="", id_value=""),
    WEBHOOK_ATTEMPTS,
    EMAIL,
    EMAIL_ATTEMPTS,
]


def carry_over(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for statement in FIRST:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0012_deliveries"),
    ]

    operations = [
        migrations.RunPython(carry_over, migrations.RunPython.noop, elidable=False),
    ]
