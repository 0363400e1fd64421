"""Staff admin: the domain list shows state and the last check; Re-verify calls the service."""

from __future__ import annotations

import pytest
from django.urls import reverse

from domains.choices import State
from domains.models import Domain, DomainEvent
from domains.services.custom_domains import domain_add
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live

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


def project_form(project, **changes) -> dict:
    """The project's change form as the admin renders it, with `changes` made."""
    data = {
        "slug": project.slug,
        "name": project.name,
        "owner": project.owner_id,
        "plan": project.plan,
        "primary_domain": project.primary_domain_id or "",
        # Not on the form (kept as it is); sent as the admin's default form would.
        "created_at_0": f"{project.created_at:%Y-%m-%d}",
        "created_at_1": f"{project.created_at:%H:%M:%S}",
    }
    for prefix in ("domains", "deploys"):
        data |= {
            f"{prefix}-TOTAL_FORMS": 0,
            f"{prefix}-INITIAL_FORMS": 0,
            f"{prefix}-MIN_NUM_FORMS": 0,
            f"{prefix}-MAX_NUM_FORMS": 1000,
        }
    return data | changes


def test_staff_cannot_make_another_projects_domain_the_primary(
    staff_client, shop, bobs, alice, bob
):
    mine = go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    theirs = go_live(domain_add(project=bobs, hostname="www.bob.test", actor=bob))
    url = reverse("admin:domains_project_change", args=[shop.pk])
    page = staff_client.get(url).content.decode()
    assert "www.example.test" in page and "www.bob.test" not in page  # the choices

    response = staff_client.post(url, project_form(shop, primary_domain=theirs.pk))
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert "primary_domain" in errors
    shop.refresh_from_db()
    assert shop.primary_domain_id is None
    assert not DomainEvent.objects.filter(action="primary_set").exists()

    response = staff_client.post(url, project_form(shop, primary_domain=mine.pk))
    assert response.status_code == 302
    shop.refresh_from_db()
    assert shop.primary_domain_id == mine.pk
    event = DomainEvent.objects.get(action="primary_set")
    assert event.actor is not None and event.actor.username == "carol"


def test_staff_cannot_make_a_domain_that_redirects_away_the_primary(staff_client, shop, alice):
    old = go_live(domain_add(project=shop, hostname="old.example.test", actor=alice))
    www = go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    redirect_save(project=shop, from_domain=old, to_domain=www, actor=alice)
    url = reverse("admin:domains_project_change", args=[shop.pk])
    response = staff_client.post(url, project_form(shop, primary_domain=old.pk))
    assert response.status_code == 200
    assert "redirects elsewhere" in str(response.context["adminform"].form.errors)
    shop.refresh_from_db()
    assert shop.primary_domain_id is None
