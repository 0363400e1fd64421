"""A domain's state and its certificate state move in step (domains.choices.CERT_STATES),
kept by a check constraint. Rows the transitions could never have written are brought in
step first, the way the code reads them; like every migration, this one names its values
itself rather than importing the application's.
"""

from django.db import migrations, models


def bring_in_step(apps, schema_editor):
    """Issuing means requested and active means issued. A verified domain with anything
    but a block has no request the code knows of: it is left with none, and the sweep
    requests its certificate, as a check would have."""
    Domain = apps.get_model("domains", "Domain")
    Domain.objects.filter(state="issuing").exclude(cert_state="requested").update(
        cert_state="requested"
    )
    Domain.objects.filter(state="active").exclude(cert_state="issued").update(cert_state="issued")
    Domain.objects.filter(state="verified", cert_state__in=["requested", "issued"]).update(
        cert_state="none"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("domains", "0004_certificate_authorities"),
    ]

    operations = [
        migrations.RunPython(bring_in_step, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="domain",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("cert_state__in", ["issued"]), ("state", "active")),
                    models.Q(
                        ("cert_state__in", ["blocked", "issued", "none", "requested"]),
                        ("state", "failed"),
                    ),
                    models.Q(("cert_state__in", ["requested"]), ("state", "issuing")),
                    models.Q(
                        ("cert_state__in", ["blocked", "issued", "none", "requested"]),
                        ("state", "lost"),
                    ),
                    models.Q(
                        ("cert_state__in", ["blocked", "issued", "none", "requested"]),
                        ("state", "misconfigured"),
                    ),
                    models.Q(
                        ("cert_state__in", ["blocked", "issued", "none", "requested"]),
                        ("state", "pending"),
                    ),
                    models.Q(("cert_state__in", ["blocked", "none"]), ("state", "verified")),
                    _connector="OR",
                ),
                name="domains_cert_state_in_step_with_state",
            ),
        ),
    ]
