"""Each certificate names the CA that issued it, and each ACME order the CA it is at (their
directory URLs), so a renewal asks that CA first and an order is resumed where it was placed.
Empty for the rows before, read as the first CA's; a database default, so the previous
release's INSERTs, which leave the columns out, still work during a rolling deploy."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [
        ("domains", "0026_sentences_kept"),
    ]

    operations = [
        migrations.AddField(
            model_name="acmeorder",
            name="directory",
            field=models.CharField(blank=True, db_default="", default="", max_length=500),
        ),
        migrations.AddField(
            model_name="certificate",
            name="ca_directory",
            field=models.CharField(blank=True, db_default="", default="", max_length=500),
        ),
        migrations.AlterField(
            model_name="domainevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("added", "Added the domain"),
                    ("verify_requested", "Chose Verify"),
                    ("reverify_requested", "Chose Re-verify"),
                    ("verified", "Verification passed"),
                    ("verifies_again", "Verifies again"),
                    ("check_failed", "Check failed"),
                    ("failed", "Verification failed"),
                    ("stopped_verifying", "Stopped verifying"),
                    ("certificate_requested", "Certificate requested"),
                    ("certificate_issued", "Certificate issued"),
                    ("certificate_blocked", "Certificate blocked"),
                    ("certificate_delayed", "Certificate delayed: the CA could not reach us"),
                    ("certificate_renewed", "Certificate renewed"),
                    ("ca_skipped", "Certificate authority skipped: the next one was asked"),
                    ("renewal_blocked", "Renewal blocked"),
                    ("removed", "Removed the domain"),
                    ("primary_set", "Set the primary domain"),
                    ("redirect_saved", "Saved a redirect"),
                    ("redirect_deleted", "Deleted a redirect"),
                    ("expired", "Dropped: never verified"),
                    ("rival_claim", "Another project claimed this name"),
                    ("took_over", "Took the name over with the TXT record"),
                    ("lost", "Lost the name to another project"),
                    ("stopped_serving", "Stopped serving"),
                    ("primary_cleared", "Primary domain cleared"),
                    ("redirect_paused", "Redirect paused: its target is not served"),
                    ("redirect_resumed", "Redirect resumed: its target is served again"),
                ],
                max_length=40,
            ),
        ),
    ]
