"""Certificates from either CA: issuer and renewal time on each certificate, ACME orders
and their HTTP-01 challenges, and private keys sealed at rest (domains/pki/sealing.py).

The data step carries its own copy of the application code it used when it was
written (`renewal_time` from domains/models.py; `common_name` and `issued_from_pem`
from domains/pki/authority.py; `seal` and `is_sealed` from domains/pki/sealing.py), frozen
as they were then, so that changing the application never changes what this migration
does to a database.
"""

import base64

import django.db.models.deletion
import django.utils.timezone
from cryptography import x509
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.x509.oid import NameOID
from django.conf import settings
from django.db import migrations, models

# Frozen copies; see the module docstring.
PURPOSE = b"petstore domains: private keys at rest"
PEM_START = "-----BEGIN"


def renewal_time(not_before, not_after):
    return not_before + (not_after - not_before) * 2 / 3


def is_sealed(value):
    return not value.lstrip().startswith(PEM_START)


def seal(key_pem):
    # Not frozen: the release step may run without the key, which only the worker and the
    # edge hold; sealing under an empty one would lose the keys.
    if not settings.DOMAINS_KEY_ENCRYPTION_KEY:
        raise RuntimeError(
            "DOMAINS_KEY_ENCRYPTION_KEY must be set for this migration: it seals the "
            "private keys stored in clear; run migrate once with it"
        )
    secret = settings.DOMAINS_KEY_ENCRYPTION_KEY.encode()
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(secret)
    return Fernet(base64.urlsafe_b64encode(derived)).encrypt(key_pem.encode()).decode()


def common_name(name):
    names = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else name.rfc4514_string()


def issued_from_pem(chain_pem, key_pem):
    leaf = x509.load_pem_x509_certificates(chain_pem.encode())[0]
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = san.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    return {
        "serial": format(leaf.serial_number, "x"),
        "not_before": leaf.not_valid_before_utc,
        "not_after": leaf.not_valid_after_utc,
        "san": ",".join(names) or common_name(leaf.subject),
        "pem": chain_pem,
        "key_pem": key_pem,
        "issuer": common_name(leaf.issuer),
    }


def fill_and_seal(apps, schema_editor):
    """The existing rows: issuer and renewal time read from their certificate (two thirds
    into its validity), and the clear private keys sealed."""
    Certificate = apps.get_model("domains", "Certificate")
    for certificate in Certificate.objects.all().iterator():
        try:
            certificate.issuer = issued_from_pem(certificate.pem, "")["issuer"]
        except ValueError:
            certificate.issuer = ""  # not a PEM certificate: nothing to read
        certificate.renew_after = renewal_time(certificate.not_before, certificate.not_after)
        if not is_sealed(certificate.key_pem):
            certificate.key_pem = seal(certificate.key_pem)
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
