"""Project settings → Domains: Add domain, the DNS values, Verify, Remove, the audit trail."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from domains.models import Domain, DomainEvent, Redirect
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_request_check
from domains.services.projects import project_create
from domains.services.redirects import redirect_save
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET, go_live

SHOP = "/dashboard/projects/shop/domains/"


def _add(client, hostname, project="shop"):
    return client.post(f"/dashboard/projects/{project}/domains/add/", {"hostname": hostname})


def test_add_domain_shows_the_cname_to_create(alice_client, shop, settings):
    response = _add(alice_client, "www.example.com")
    assert response.status_code == 302
    assert response["Location"] == SHOP + "www.example.com/"

    page = alice_client.get(response["Location"]).content.decode()
    assert "www.example.com was added. Create the DNS record below, then choose Verify." in page
    for value in ["CNAME", "www", settings.PLATFORM_CNAME_TARGET, "3600"]:
        assert f'data-copy="{value}"' in page, value
    assert "up to 48 hours" in page
    assert Domain.objects.get(hostname="www.example.com").project == shop


def test_apex_domain_gets_alias_or_aname_with_the_provider_caveat(alice_client, shop, settings):
    page = alice_client.get(_add(alice_client, "example.com")["Location"]).content.decode()
    assert 'data-copy="ALIAS"' in page and 'data-copy="ANAME"' in page
    assert 'data-copy="@"' in page
    assert "Not every DNS provider supports these" in page
    assert 'data-copy="CNAME"' not in page


def test_unicode_domain_is_shown_as_typed_and_stored_as_idna(alice_client, shop):
    response = _add(alice_client, "bücher.example.com")
    assert response["Location"] == SHOP + "xn--bcher-kva.example.com/"
    assert "bücher.example.com" in alice_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "hostname, message",
    [
        ("https://shop.example.com/", "without a scheme, path or spaces"),
        ("localhost", "Enter a full domain name with a dot"),
        ("192.0.2.10", "not an IP address"),
        ("", "This field is required."),
    ],
)
def test_invalid_names_are_refused_on_the_form(alice_client, shop, hostname, message):
    response = _add(alice_client, hostname)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Domain.objects.exists()


def test_free_plan_is_refused_with_the_reason(alice_client, sketch):
    response = _add(alice_client, "www.example.com", project="sketch")
    assert response.status_code == 400
    assert "Custom domains need the Pro plan or above" in response.content.decode()


def test_project_without_a_successful_deploy_is_refused(alice_client, alice):
    project_create(slug="draft", owner=alice, plan="pro")
    response = _add(alice_client, "www.example.com", project="draft")
    assert response.status_code == 400
    assert "Deploy the project successfully before adding a custom domain" in (
        response.content.decode()
    )


def test_a_name_another_project_claims_is_added_and_asks_for_the_txt_proof(
    alice_client, shop, bob, bobs
):
    theirs = domain_add(project=bobs, hostname="www.example.com", actor=bob)
    response = _add(alice_client, "WWW.Example.com")
    assert response.status_code == 302
    mine = Domain.objects.get(hostname="www.example.com", project=shop)
    page = alice_client.get(response["Location"]).content.decode()
    assert "_petstore-verification.www" in page
    assert mine.verification_token in page
    assert theirs.verification_token not in page  # each claim sees its own token only


def test_domains_list_shows_status_badge_and_last_check(alice_client, shop, alice):
    domain_add(project=shop, hostname="www.example.com", actor=alice)
    page = alice_client.get(SHOP).content.decode()
    assert 'class="badge badge-pending"' in page and ">Pending<" in page
    assert "not checked yet" in page
    assert ">Verify</button>" in page


def test_verify_starts_a_check_and_the_page_watches_for_the_result(
    alice_client, shop, alice, django_capture_on_commit_callbacks
):
    domain = domain_add(project=shop, hostname="www.example.com", actor=alice)
    with django_capture_on_commit_callbacks() as queued:
        response = alice_client.post(SHOP + "www.example.com/verify/")
    assert response.status_code == 302
    assert len(queued) == 1  # the check, queued once the request's transaction commits

    page = alice_client.get(response["Location"]).content.decode()
    assert "Check queued" in page
    assert 'data-status-url="/dashboard/projects/shop/domains/www.example.com/status.json"' in page

    status = alice_client.get(SHOP + "www.example.com/status.json").json()
    assert status["check_in_progress"] is True
    assert status["live"] is True
    assert status["state"] == "pending"
    event = domain.events.get(action="verify_requested")
    assert event.actor == alice


def test_history_shows_who_did_what_and_when(alice_client, shop, alice):
    domain = domain_add(project=shop, hostname="www.example.com", actor=alice)
    domain_request_check(domain=domain, actor=alice)
    page = alice_client.get(SHOP + "www.example.com/").content.decode()
    history = page[page.index('id="history"') :]
    assert "Added the domain" in history and "Chose Verify" in history
    assert history.count("<td>alice</td>") == 2
    for event in domain.events.all():
        assert event.created_at.strftime("%Y-%m-%d %H:%M:%S") in history


def test_domain_page_queries_do_not_grow_with_its_history(alice_client, shop, alice):
    domain = domain_add(project=shop, hostname="www.example.com", actor=alice)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert alice_client.get(SHOP + "www.example.com/").status_code == 200
        return len(captured)

    few = queries()
    for _ in range(5):  # each row names its actor: one join, not a query per row
        DomainEvent.objects.create(
            project=shop, domain=domain, hostname=domain.hostname, actor=alice, action="added"
        )
    assert queries() == few


def test_remove_asks_for_confirmation_and_warns(alice_client, shop, alice):
    domain_add(project=shop, hostname="www.example.com", actor=alice)
    page = alice_client.get(SHOP + "www.example.com/remove/").content.decode()
    assert "Traffic to www.example.com stops at once." in page
    assert "Inbound links to it break unless a redirect is set up first." in page
    assert "Redirect instead" not in page  # no other domain to send visitors to
    assert Domain.objects.filter(hostname="www.example.com").exists()


def test_remove_offers_a_redirect_when_the_project_has_another_domain(alice_client, shop, alice):
    old = domain_add(project=shop, hostname="old.example.com", actor=alice)
    new = go_live(domain_add(project=shop, hostname="www.example.com", actor=alice))
    page = alice_client.get(SHOP + "old.example.com/remove/").content.decode()
    assert "Redirect instead" in page

    response = alice_client.post(
        SHOP + "old.example.com/remove/", {"redirect_to": new.pk, "redirect_instead": "1"}
    )
    assert response.status_code == 302
    entry = Redirect.objects.get(from_domain=old)
    assert (entry.to_domain, entry.status) == (new, 301)
    assert Domain.objects.filter(pk=old.pk).exists()


def test_remove_offers_a_redirect_to_the_only_other_domain_though_it_redirects_here(
    alice_client, shop, alice
):
    """www is the primary and the apex redirects to it: Redirect instead sends www's visitors
    to the apex, whose redirect back gives way, and the apex becomes the primary."""
    www = go_live(domain_add(project=shop, hostname="www.example.com", actor=alice))
    apex = go_live(domain_add(project=shop, hostname="example.com", actor=alice))
    redirect_save(project=shop, from_domain=apex, to_domain=www, actor=alice)
    shop.primary_domain = www
    shop.save(update_fields=["primary_domain"])
    page = alice_client.get(SHOP + "www.example.com/remove/").content.decode()
    assert "Redirect instead" in page

    response = alice_client.post(
        SHOP + "www.example.com/remove/", {"redirect_to": apex.pk, "redirect_instead": "1"}
    )
    assert response.status_code == 302
    assert list(Redirect.objects.values_list("from_domain", "to_domain")) == [(www.pk, apex.pk)]
    shop.refresh_from_db()
    assert shop.primary_domain == apex
    assert Domain.objects.filter(pk=www.pk).exists()


def test_remove_stops_the_domain_and_records_who_did_it(alice_client, shop, alice):
    domain_add(project=shop, hostname="www.example.com", actor=alice)
    response = alice_client.post(SHOP + "www.example.com/remove/", {"remove": "1"})
    assert response.status_code == 302
    assert response["Location"] == SHOP
    assert not Domain.objects.filter(hostname="www.example.com").exists()
    assert alice_client.get(SHOP + "www.example.com/").status_code == 404

    page = alice_client.get(SHOP).content.decode()
    assert "www.example.com was removed and no longer serves traffic." in page
    activity = page[page.index('id="activity-h"') :]
    assert "Removed the domain" in activity and "alice" in activity
    assert DomainEvent.objects.get(action="removed").actor == alice


def test_redirect_instead_without_a_target_removes_nothing(alice_client, shop, alice):
    domain_add(project=shop, hostname="old.example.com", actor=alice)
    domain_add(project=shop, hostname="www.example.com", actor=alice)
    response = alice_client.post(
        SHOP + "old.example.com/remove/", {"redirect_to": "", "redirect_instead": "1"}
    )
    assert response.status_code == 400
    assert "Choose the domain to redirect to." in response.content.decode()
    assert Domain.objects.filter(hostname="old.example.com").exists()


def test_remove_page_says_an_existing_redirect_ends_with_the_domain(alice_client, shop, alice):
    old = domain_add(project=shop, hostname="old.example.com", actor=alice)
    new = domain_add(project=shop, hostname="www.example.com", actor=alice)
    redirect_save(project=shop, from_domain=old, to_domain=go_live(new), actor=alice)
    page = alice_client.get(SHOP + "old.example.com/remove/").content.decode()
    assert "redirects to <strong>www.example.com</strong> (301) now" in page
    assert "Removing it ends that redirect too" in page
    assert "Redirect instead" not in page


def test_the_domain_page_reads_the_certificate_once(alice_client, shop, alice, dns_server):
    dns_server.add("www.example.com", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.com", actor=alice)
    domain_check(domain_id=domain.pk)  # verified: its certificate is requested
    issued = certificates.certificate_issue(domain_id=domain.pk)
    assert issued is not None

    with CaptureQueriesContext(connection) as captured:
        response = alice_client.get(SHOP + "www.example.com/")

    assert response.status_code == 200
    assert issued.serial in response.content.decode()
    reads = [q for q in captured if 'FROM "domains_certificate"' in q["sql"]]
    assert len(reads) == 1
