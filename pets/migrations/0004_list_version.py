"""The list version: one number the database raises whenever a pet is added, changed or
removed, by whatever path (petstore/versions/ says how), so that listPets' hot path can
keep the pages it wrote until it moves (docs/decisions/performance.md; 0006 drops it all).

PostgreSQL: deferred constraint triggers, raised once per writing transaction when it
commits, after every other lock it takes (two writers never wait on each other through it
but for the commit itself); TRUNCATE (test flushes) raises it too. SQLite: plain triggers.
"""

from django.db import migrations

from petstore import versions

CREATE_TABLE = {
    "postgresql": """
        CREATE TABLE pets_list_version (
            id smallint PRIMARY KEY CHECK (id = 1),
            version bigint NOT NULL,
            bumped_by xid8
        )""",
    "sqlite": """
        CREATE TABLE pets_list_version (
            id integer PRIMARY KEY CHECK (id = 1),
            version integer NOT NULL
        )""",
}
FIRST_ROW = "INSERT INTO pets_list_version (id, version) VALUES (1, 0)"

POSTGRESQL = [
    FIRST_ROW,
    # Once per transaction: a bulk insert's rows would each update the row again.
    """
    CREATE FUNCTION pets_list_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE pets_list_version SET version = version + 1, bumped_by = pg_current_xact_id()
        WHERE id = 1 AND bumped_by IS DISTINCT FROM pg_current_xact_id();
        RETURN NULL;
    END
    $$""",
    """
    CREATE CONSTRAINT TRIGGER pets_list_version_pet
    AFTER INSERT OR UPDATE OR DELETE ON pets_pet
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION pets_list_version_bump()""",
    """
    CREATE TRIGGER pets_list_version_pet_truncate
    AFTER TRUNCATE ON pets_pet
    FOR EACH STATEMENT EXECUTE FUNCTION pets_list_version_bump()""",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER pets_list_version_pet_truncate ON pets_pet",
    "DROP TRIGGER pets_list_version_pet ON pets_pet",
    "DROP FUNCTION pets_list_version_bump()",
]

SQLITE_TRIGGERS = ("insert", "update", "delete")
SQLITE_BUMP = "UPDATE pets_list_version SET version = version + 1 WHERE id = 1"
SQLITE = [
    FIRST_ROW,
    *(
        f"CREATE TRIGGER pets_list_version_pet_{event} AFTER {event.upper()} ON pets_pet "
        f"BEGIN {SQLITE_BUMP}; END"
        for event in SQLITE_TRIGGERS
    ),
]
SQLITE_DROP = [f"DROP TRIGGER pets_list_version_pet_{event}" for event in SQLITE_TRIGGERS]


class Migration(migrations.Migration):
    dependencies = [
        ("pets", "0003_idempotencyrecord_moved"),
    ]

    operations = [
        versions.migration(
            "pets_list_version",
            create={
                "postgresql": [CREATE_TABLE["postgresql"], *POSTGRESQL],
                "sqlite": [CREATE_TABLE["sqlite"], *SQLITE],
            },
            drop={"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP},
        )
    ]
