"""A redirect never sends visitors to a target that is not served here: when the target is
lost to another project or stops serving, the redirect pauses (the source answers with its
own page) and the owner is told once; when the target is live again, it resumes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domains.choices import State
from domains.models import Domain, DomainEvent
from domains.services.custom_domains import domain_add, domain_request_check
from domains.services.redirects import redirect_save
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check

pytestmark = pytest.mark.django_db
APEX, WWW = "example.test", "www.example.test"
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def site(dns_server, shop, alice):
    """alice's www redirects to her apex; both verified by their DNS records."""
    dns_server.add(APEX, "A", TARGET_ADDRESS)
    dns_server.add(APEX, "AAAA", TARGET_ADDRESS6)
    dns_server.add(WWW, "CNAME", TARGET + ".")
    apex = check(domain_add(project=shop, hostname=APEX, actor=alice))
    www = check(domain_add(project=shop, hostname=WWW, actor=alice))
    assert apex.is_live and www.is_live
    redirect_save(project=shop, from_domain=www, to_domain=apex, actor=alice)
    return {"apex": apex, "www": www}


def visit(client, host: str):
    return client.get("/path?q=1", HTTP_HOST=host)


def prove(dns_server, claim: Domain) -> None:
    dns_server.remove(claim.ownership_txt_name)
    dns_server.add(claim.ownership_txt_name, "TXT", f'"{claim.verification_token}"')


def lines(action: str) -> list[DomainEvent]:
    return list(DomainEvent.objects.filter(hostname=WWW, action=action))


def test_a_redirect_to_a_name_lost_to_another_project_pauses_and_resumes(
    client, dns_server, site, shop, bobs, alice, bob
):
    assert visit(client, WWW).status_code == 301
    assert visit(client, WWW)["Location"] == f"http://{APEX}/path?q=1"

    theirs = domain_add(project=bobs, hostname=APEX, actor=bob)
    prove(dns_server, theirs)  # whoever controls the apex's DNS proves it for bob
    assert check(theirs).is_live
    assert Domain.objects.get(pk=site["apex"].pk).state == State.LOST

    for _ in range(3):  # page views record nothing
        response = visit(client, WWW)
        assert response.status_code == 200
        assert response.content == b"<h1>Alice's shop</h1>"  # www's own page, not bob's site
    [paused] = lines("redirect_paused")
    assert paused.project == shop and paused.domain == site["www"]
    assert f"{WWW} -> {APEX}" in paused.message
    assert lines("redirect_resumed") == []

    # alice takes her apex back with her own TXT record, and the redirect answers again.
    prove(dns_server, site["apex"])
    domain_request_check(domain=Domain.objects.get(pk=site["apex"].pk), actor=alice)
    assert check(site["apex"]).is_live
    assert visit(client, WWW).status_code == 301
    assert visit(client, WWW)["Location"] == f"http://{APEX}/path?q=1"
    assert len(lines("redirect_resumed")) == 1 and len(lines("redirect_paused")) == 1


def test_a_redirect_to_a_name_that_stopped_serving_pauses(
    client, dns_server, site, alice, time_machine
):
    time_machine.move_to(T0, tick=False)
    dns_server.remove(APEX)  # the apex's record left; after the grace period it stops
    check(site["apex"])
    time_machine.move_to(T0 + timedelta(hours=49), tick=False)
    assert check(site["apex"]).state == State.MISCONFIGURED
    assert visit(client, WWW).status_code == 200
    assert len(lines("redirect_paused")) == 1

    dns_server.add(APEX, "A", TARGET_ADDRESS)
    dns_server.add(APEX, "AAAA", TARGET_ADDRESS6)
    domain_request_check(domain=Domain.objects.get(pk=site["apex"].pk), actor=alice)
    assert check(site["apex"]).is_live
    assert visit(client, WWW).status_code == 301
    assert len(lines("redirect_resumed")) == 1


def test_the_owners_page_says_the_redirect_paused(alice_client, dns_server, site, bobs, bob):
    theirs = domain_add(project=bobs, hostname=APEX, actor=bob)
    prove(dns_server, theirs)
    check(theirs)
    page = alice_client.get(f"/dashboard/projects/shop/domains/{WWW}/").content.decode()
    security = page[page.index('id="security"') :]
    assert "Redirect paused: its target is not served" in security
