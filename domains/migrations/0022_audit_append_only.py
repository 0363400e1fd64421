"""The audit log is append-only in the database: every UPDATE and DELETE of an entry is
refused, but the retention purge's (domains_audit_purge, which the daily task calls with
AUDIT_LOG_RETENTION_DAYS) deleting entries older than the retention; TRUNCATE is refused
unless the connection says `petstore.audit_truncate=on` (the tests' database flushes
between tests)."""

from django.db import migrations

from petstore.database.migrations import LockTimeoutMigration

APPEND_ONLY = """
CREATE FUNCTION domains_audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    purge_before text := current_setting('petstore.audit_purge_before', true);
BEGIN
    IF TG_OP = 'DELETE' AND coalesce(purge_before, '') <> ''
            AND OLD.at < purge_before::timestamptz THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: % of entry % refused', TG_OP, OLD.id
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER domains_audit_append_only
    BEFORE UPDATE OR DELETE ON domains_auditentry
    FOR EACH ROW EXECUTE FUNCTION domains_audit_refuse_change();

CREATE FUNCTION domains_audit_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('petstore.audit_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: TRUNCATE refused'
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER domains_audit_no_truncate
    BEFORE TRUNCATE ON domains_auditentry
    FOR EACH STATEMENT EXECUTE FUNCTION domains_audit_refuse_truncate();

-- The one deletion allowed: entries older than `retention_days` by the database's clock.
-- The cutoff it sets lets the trigger through for this statement alone, and is cleared
-- before it returns, so nothing later in the transaction inherits it.
CREATE FUNCTION domains_audit_purge(retention_days integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    cutoff timestamptz;
    deleted bigint;
BEGIN
    IF retention_days IS NULL OR retention_days < 1 THEN
        RAISE EXCEPTION 'the audit log keeps entries 1 day at least, not %', retention_days;
    END IF;
    cutoff := now() - make_interval(days => retention_days);
    PERFORM set_config('petstore.audit_purge_before', cutoff::text, true);
    DELETE FROM domains_auditentry WHERE at < cutoff;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    PERFORM set_config('petstore.audit_purge_before', '', true);
    RETURN deleted;
END $$;
"""

DROP = """
DROP FUNCTION domains_audit_purge(integer);
DROP TRIGGER domains_audit_no_truncate ON domains_auditentry;
DROP FUNCTION domains_audit_refuse_truncate();
DROP TRIGGER domains_audit_append_only ON domains_auditentry;
DROP FUNCTION domains_audit_refuse_change();
"""


class Migration(LockTimeoutMigration):
    dependencies = [("domains", "0021_members_roles_and_audit")]

    operations = [migrations.RunSQL(APPEND_ONLY, DROP)]
