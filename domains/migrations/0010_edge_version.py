"""The edge version: one number the database raises whenever what a TLS handshake is answered
may have changed (a certificate row written, a domain added, removed, renamed or moved to
another state), on every write path alike, the ORM's, a bulk update's, raw SQL's or a
cascade's, so that the certificate endpoint can keep its answers until it moves
(domains/edge/version.py reads it, docs/decisions/edge.md says why).

PostgreSQL: deferred constraint triggers, so the row is raised when the writing transaction
commits, after every other lock it takes: two transactions never wait on each other through
it (were it raised at the write, one holding it while locking a domain the other holds would
deadlock). TRUNCATE (test flushes) raises it too. SQLite: plain triggers (its writes are
serialised anyway). On SQLite, a migration that remakes either table drops its triggers:
tests/domains/edge/test_version.py and `manage.py edge`'s start-up check then fail until that
migration creates them again.

The version's table is no model: Django's test flush would truncate it, and a number that
starts again at 0 could return to a value an endpoint already holds.
"""

from django.db import migrations

from petstore import versions

CREATE_TABLE = {
    "postgresql": """
        CREATE TABLE domains_edge_version (
            id smallint PRIMARY KEY CHECK (id = 1),
            version bigint NOT NULL,
            bumped_by xid8
        )""",
    "sqlite": """
        CREATE TABLE domains_edge_version (
            id integer PRIMARY KEY CHECK (id = 1),
            version integer NOT NULL
        )""",
}
SQLITE_BUMP = "UPDATE domains_edge_version SET version = version + 1 WHERE id = 1"
FIRST_ROW = "INSERT INTO domains_edge_version (id, version) VALUES (1, 0)"

POSTGRESQL = [
    FIRST_ROW,
    # Once per transaction: a row updated again in the transaction that updated it leaves
    # one more version of it to step over each time (a bulk update of 10,000 domains' states
    # took 4.3 s, 0.5 s with this).
    """
    CREATE FUNCTION domains_edge_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE domains_edge_version SET version = version + 1, bumped_by = pg_current_xact_id()
        WHERE id = 1 AND bumped_by IS DISTINCT FROM pg_current_xact_id();
        RETURN NULL;
    END
    $$""",
    """
    CREATE CONSTRAINT TRIGGER domains_edge_version_certificate
    AFTER INSERT OR UPDATE OR DELETE ON domains_certificate
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION domains_edge_version_bump()""",
    """
    CREATE CONSTRAINT TRIGGER domains_edge_version_domain
    AFTER INSERT OR DELETE ON domains_domain
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION domains_edge_version_bump()""",
    # Checks write a domain's row often (checked_at, next_check_at...): only its state and
    # its name decide what a handshake gets.
    """
    CREATE CONSTRAINT TRIGGER domains_edge_version_domain_state
    AFTER UPDATE OF state, hostname ON domains_domain
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.hostname IS DISTINCT FROM NEW.hostname)
    EXECUTE FUNCTION domains_edge_version_bump()""",
    """
    CREATE TRIGGER domains_edge_version_certificate_truncate
    AFTER TRUNCATE ON domains_certificate
    FOR EACH STATEMENT EXECUTE FUNCTION domains_edge_version_bump()""",
    """
    CREATE TRIGGER domains_edge_version_domain_truncate
    AFTER TRUNCATE ON domains_domain
    FOR EACH STATEMENT EXECUTE FUNCTION domains_edge_version_bump()""",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER domains_edge_version_domain_truncate ON domains_domain",
    "DROP TRIGGER domains_edge_version_certificate_truncate ON domains_certificate",
    "DROP TRIGGER domains_edge_version_domain_state ON domains_domain",
    "DROP TRIGGER domains_edge_version_domain ON domains_domain",
    "DROP TRIGGER domains_edge_version_certificate ON domains_certificate",
    "DROP FUNCTION domains_edge_version_bump()",
]


def _sqlite_trigger(name: str, event: str, table: str, when: str = "") -> str:
    return f"CREATE TRIGGER {name} AFTER {event} ON {table} {when} BEGIN {SQLITE_BUMP}; END"


SQLITE_TRIGGERS = {
    "domains_edge_version_certificate_insert": ("INSERT", "domains_certificate", ""),
    "domains_edge_version_certificate_update": ("UPDATE", "domains_certificate", ""),
    "domains_edge_version_certificate_delete": ("DELETE", "domains_certificate", ""),
    "domains_edge_version_domain_insert": ("INSERT", "domains_domain", ""),
    "domains_edge_version_domain_delete": ("DELETE", "domains_domain", ""),
    "domains_edge_version_domain_state": (
        "UPDATE OF state, hostname",
        "domains_domain",
        "WHEN OLD.state IS NOT NEW.state OR OLD.hostname IS NOT NEW.hostname",
    ),
}
SQLITE = [
    FIRST_ROW,
    *(_sqlite_trigger(name, *how) for name, how in SQLITE_TRIGGERS.items()),
]
SQLITE_DROP = [f"DROP TRIGGER {name}" for name in SQLITE_TRIGGERS]


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0009_webhooks"),
    ]

    operations = [
        versions.migration(
            "domains_edge_version",
            create={
                "postgresql": [CREATE_TABLE["postgresql"], *POSTGRESQL],
                "sqlite": [CREATE_TABLE["sqlite"], *SQLITE],
            },
            drop={"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP},
        )
    ]
