"""Staff admin: the domain list shows state and the last check; Re-verify calls the service."""

from __future__ import annotations

import pytest
from django.urls import reverse

from domains.choices import State
from domains.models import Domain, DomainEvent
from domains.services.custom_domains import domain_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, carol):
    client.force_login(carol)
    return client


@pytest.fixture
def failed(shop, alice):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=domain.pk).update(
        state=State.FAILED, check_code="wrong_target", check_message="The CNAME points to x."
    )
    return domain


@pytest.mark.parametrize(
    "model", ["project", "deploy", "domain", "redirect", "certificate", "domainevent"]
)
def test_every_model_has_a_list_page(staff_client, failed, model):
    response = staff_client.get(reverse(f"admin:domains_{model}_changelist"))
    assert response.status_code == 200


def test_domain_list_shows_state_and_last_check(staff_client, failed):
    page = staff_client.get(reverse("admin:domains_domain_changelist")).content.decode()
    assert "www.example.test" in page
    assert "wrong_target" in page
    assert "Failed" in page


def test_reverify_action_restarts_verification(
    staff_client, failed, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = staff_client.post(
            reverse("admin:domains_domain_changelist"),
            {"action": "reverify", "_selected_action": [failed.pk]},
        )
    assert response.status_code == 302
    assert len(queued) == 1
    failed.refresh_from_db()
    assert failed.state == State.PENDING
    event = DomainEvent.objects.get(action="verify_requested")
    assert event.actor is not None and event.actor.username == "carol"


def test_deleting_in_the_admin_goes_through_domain_remove(staff_client, failed):
    response = staff_client.post(
        reverse("admin:domains_domain_delete", args=[failed.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    assert not Domain.objects.exists()
    assert DomainEvent.objects.filter(action="removed", actor__username="carol").exists()


def test_inlines_show_domains_and_certificates_read_only(staff_client, failed, shop):
    failed.certificates.create(
        serial="abc123", san=failed.hostname, not_before=failed.created_at,
        not_after=failed.created_at, pem="-", key_pem="-",
    )  # fmt: skip
    pages = {
        "hostname": staff_client.get(reverse("admin:domains_project_change", args=[shop.pk])),
        "serial": staff_client.get(reverse("admin:domains_domain_change", args=[failed.pk])),
    }
    for field, page in pages.items():
        assert page.status_code == 200
        inline = page.context["inline_admin_formsets"][0]
        assert not inline.formset.can_delete
        form = inline.formset.forms[0]
        assert field not in form.fields  # shown, not editable
        assert str(getattr(form.instance, field)) in page.content.decode()


def test_certificates_list_names_issuer_serial_expiry_and_renewal_never_the_key(
    staff_client, failed
):
    certificate = failed.certificates.create(
        serial="abc123", san=failed.hostname, not_before=failed.created_at,
        not_after=failed.created_at, pem="-", key_pem="sealed-secret",
        issuer="Pebble Intermediate CA 1a2b",
    )  # fmt: skip
    listing = staff_client.get(reverse("admin:domains_certificate_changelist")).content.decode()
    assert "Pebble Intermediate CA 1a2b" in listing and "abc123" in listing
    change = staff_client.get(reverse("admin:domains_certificate_change", args=[certificate.pk]))
    page = change.content.decode()
    assert "Pebble Intermediate CA 1a2b" in page
    assert f"{certificate.renew_after:%Y}" in page
    assert "sealed-secret" not in page
