"""What the owner reads as a domain moves through its lifecycle: one voice for the badge
and the sentence beside it, what Remove will change, a lost name, and no DNS question
asked while a page is shown."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from domains.services.custom_domains import domain_add, domain_request_check
from domains.services.redirects import redirect_save
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET, check, go_live

pytestmark = pytest.mark.django_db
P = "/dashboard/projects/shop/"
D = P + "domains/www.example.test/"


def test_a_page_view_asks_the_dns_nothing(alice_client, www, dns_server, time_machine):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_check(domain_id=www.pk)
    time_machine.move_to(timezone.now() + timedelta(minutes=31))  # troubleshooting shows
    dns_server.answered_all()
    dns_server.queries.clear()
    for path in (D, D + "status.json", P + "domains/", D + "remove/"):
        assert alice_client.get(path).status_code == 200
    assert 'id="troubleshooting"' in alice_client.get(D).content.decode()
    assert list(dns_server.queries) == []


def test_a_failing_live_domain_says_when_it_stops_serving(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_check(domain_id=www.pk)
    dns_server.remove("www.example.test")
    domain_check(domain_id=www.pk)
    page = alice_client.get(D).content.decode()
    assert 'data-state="failing"' in page and ">Failing<" in page
    assert "Still served, but its DNS record stopped pointing here" in page
    assert "It stops serving on" in page
    assert "Live with a certificate." not in page
    status = alice_client.get(D + "status.json").json()
    assert status["badge"] == "failing" and status["stops_serving_at"]


def test_during_a_check_the_status_says_so(alice_client, www):
    alice_client.post(D + "verify/")
    status = alice_client.get(D + "status.json").json()
    assert status["check_in_progress"] is True
    assert status["live"] is True


def test_after_verify_the_page_says_checking_now_once(alice_client, www):
    page = alice_client.post(D + "verify/", follow=True).content.decode()
    main = page[page.index("<main") : page.index("</main>")]
    assert "Check queued" in main  # the flash confirms the click
    assert len(re.findall(r"\bnow\b", main, flags=re.IGNORECASE)) == 1, main
    assert main.count("when it comes") == 1
    assert "Checking the DNS records now" in main[main.index('id="status"') :]


def test_remove_lists_what_it_will_change_and_activity_records_it(alice_client, shop, www, alice):
    old = domain_add(project=shop, hostname="old.example.test", actor=alice)
    go_live(www)
    redirect_save(project=shop, from_domain=old, to_domain=www, actor=alice)
    shop.primary_domain = www
    shop.save(update_fields=["primary_domain"])
    page = alice_client.get(D + "remove/").content.decode()
    effects = page[page.index('id="remove-effects"') :]
    assert "clears the primary domain" in effects
    assert "old.example.test → www.example.test" in effects
    assert "Redirect instead" not in page  # old.example.test is not live: nothing to send to
    alice_client.post(D + "remove/", {"remove": "1"})
    actions = set(shop.events.values_list("action", flat=True))
    assert {"removed", "redirect_deleted", "primary_cleared"} <= actions
    activity = alice_client.get(P + "domains/").content.decode()
    assert "Primary domain cleared" in activity and "Deleted a redirect" in activity


def test_a_redirect_from_a_pending_domain_says_when_it_starts(alice_client, shop, www, alice):
    pending = domain_add(project=shop, hostname="new.example.test", actor=alice)
    redirect_save(project=shop, from_domain=pending, to_domain=go_live(www), actor=alice)
    page = alice_client.get(P + "domains/").content.decode()
    assert "starts working once new.example.test verifies" in page


def test_activity_speaks_plain_words(alice_client, www, dns_server):
    dns_server.add("www.example.test", "CNAME", "elsewhere.example.net.")
    domain_check(domain_id=www.pk)
    page = alice_client.get(D).content.decode()
    activity = page[page.index('<table class="events">') :]
    assert "Check failed" in activity
    assert "The CNAME points to elsewhere.example.net" in activity
    assert "wrong_target" not in activity


def test_the_losing_project_is_told_it_lost_the_name(dns_server, shop, bobs, alice, bob):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    theirs = check(domain_add(project=bobs, hostname="www.example.test", actor=bob))
    mine = domain_add(project=shop, hostname="www.example.test", actor=alice)
    dns_server.add("_petstore-verification.www.example.test", "TXT", f'"{mine.verification_token}"')
    domain_check(domain_id=mine.pk)
    bobs_view = Client()
    bobs_view.force_login(bob)
    page = bobs_view.get(
        f"/dashboard/projects/{bobs.slug}/domains/www.example.test/"
    ).content.decode()
    assert ">Taken by another project<" in page
    assert "another project proved control of this name with a TXT record" in page
    assert "Lost the name to another project" in page
    assert theirs.verification_token in page  # his own TXT record, to take it back


def test_a_rivals_add_remove_loop_leaves_one_line_in_the_security_block(
    client, dns_server, shop, bobs, alice, bob, settings
):
    """bob adds and removes alice's live name 60 times from his dashboard: alice's page shows
    one rival-claim line, in the Security block above the history, apart from the feed."""
    # The re-add cooldown alone would stop the loop; this is the rule behind it.
    settings.DOMAINS_READD_COOLDOWN = 0
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    mine = check(domain_add(project=shop, hostname="www.example.test", actor=alice))
    assert mine.is_live
    client.force_login(bob)
    bobs_page = f"/dashboard/projects/{bobs.slug}/domains/"
    for _ in range(60):
        assert client.post(bobs_page + "add/", {"hostname": "www.example.test"}).status_code == 302
        removed = client.post(bobs_page + "www.example.test/remove/", {"remove": "1"})
        assert removed.status_code == 302
    client.force_login(alice)
    page = client.get(D).content.decode()
    security, history = security_block(page), page[page.index('id="history"') :]
    assert security.count("Another project claimed this name") == 1
    assert "Another project claimed this name" not in history
    assert page.index('id="security"') < page.index('id="history"')
    assert "bob" not in security  # the rival is not named to the owner


def test_the_security_block_keeps_a_lost_name_above_a_flood_of_lines(
    alice_client, dns_server, shop, bobs, alice, bob
):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    theirs = check(domain_add(project=bobs, hostname="www.example.test", actor=bob))
    mine = domain_add(project=shop, hostname="www.example.test", actor=alice)
    dns_server.add("_petstore-verification.www.example.test", "TXT", f'"{mine.verification_token}"')
    domain_check(domain_id=mine.pk)
    for _ in range(60):  # ordinary lines: bob presses Verify again and again
        domain_request_check(domain=theirs, actor=bob, cooldown=False)
    bobs_view = Client()
    bobs_view.force_login(bob)
    page = bobs_view.get(f"/dashboard/projects/{bobs.slug}/domains/www.example.test/")
    text = page.content.decode()
    assert "Lost the name to another project" in security_block(text)
    feed = page.context["events"]
    assert len(feed) == 50 and all(event.action != "lost" for event in feed)
    project_page = bobs_view.get(f"/dashboard/projects/{bobs.slug}/domains/")
    assert "Lost the name to another project" in security_block(project_page.content.decode())
    assert all(event.action != "lost" for event in project_page.context["events"])


def security_block(page: str) -> str:
    start = page.index('id="security"')
    return page[start : page.index("</section>", start)]


def test_while_a_check_runs_the_last_failure_is_said_as_the_previous_result(
    alice_client, www, dns_server
):
    dns_server.add("www.example.test", "A", "192.0.2.10")
    failed = check(www)
    assert 'id="check-failure"' in alice_client.get(D).content.decode()
    page = alice_client.post(D + "verify/", follow=True).content.decode()
    status = page[page.index('id="status"') : page.index('id="certificate"')]
    assert "Checking the DNS records now" in status
    assert 'id="check-failure"' not in status and 'role="alert"' not in status
    assert "What is wrong" not in status
    previous = status[status.index('id="previous-check"') :]
    assert previous.startswith(
        f'id="previous-check">Previous check, <time datetime="{failed.checked_at:%Y-%m-%dT%H:%M:%S}'
    )
    assert "www.example.test has A 192.0.2.10 instead of the CNAME" in previous
    check(www)  # the check ends: its result is the page's again
    assert 'id="check-failure"' in alice_client.get(D).content.decode()


def test_an_active_domains_page_links_to_its_https_address(alice_client, www, settings):
    settings.HTTPS_PORT = 8443
    assert 'id="https-url"' not in alice_client.get(D).content.decode()  # pending: no HTTPS yet
    go_live(www)
    page = alice_client.get(D).content.decode()
    url = "https://www.example.test:8443/"
    assert f'<a href="{url}" id="https-url">{url}</a>' in page
