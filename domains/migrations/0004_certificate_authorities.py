"""Certificates from either CA: issuer and renewal time on each certificate, ACME orders
and their HTTP-01 challenges, and private keys sealed at rest (domains/pki/keys.py)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

from domains.models import renewal_time
from domains.pki import keys
from domains.pki.authority import issued_from_pem


def fill_and_seal(apps, schema_editor):
    """The existing rows: issuer and renewal time read from their certificate (two thirds
    into its validity), and the clear private keys sealed."""
    Certificate = apps.get_model("domains", "Certificate")
    for certificate in Certificate.objects.all().iterator():
        try:
            certificate.issuer = issued_from_pem(certificate.pem, "").issuer
        except ValueError:
            certificate.issuer = ""  # not a PEM certificate: nothing to read
        certificate.renew_after = renewal_time(certificate.not_before, certificate.not_after)
        if not keys.is_sealed(certificate.key_pem):
            certificate.key_pem = keys.seal(certificate.key_pem)
        certificate.save(update_fields=["issuer", "renew_after", "key_pem"])


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0003_claims"),
    ]

    operations = [
        migrations.AddField(
            model_name="certificate",
            name="issuer",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="certificate",
            name="renew_after",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(fill_and_seal, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="certificate",
            name="renew_after",
            field=models.DateTimeField(db_index=True),
        ),
        migrations.CreateModel(
            name="AcmeOrder",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("url", models.URLField(max_length=500)),
                ("csr_pem", models.TextField()),
                ("key_pem", models.TextField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "domain",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="acme_order",
                        to="domains.domain",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AcmeChallenge",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=200, unique=True)),
                ("key_authorization", models.CharField(max_length=300)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "domain",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="acme_challenges",
                        to="domains.domain",
                    ),
                ),
            ],
        ),
    ]
