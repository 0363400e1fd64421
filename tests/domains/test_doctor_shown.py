"""Each finding of the domain doctor, made by real name servers on loopback, shown where
the owner and staff look: the domains API, `domainstatus`, the domain page, the admin,
the failing-domain email and the `domain.failing` webhook's body."""

from __future__ import annotations

import html
import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from domains import tasks
from domains.channels import CHANNELS
from domains.channels.webhooks import payload
from domains.choices import FindingCode
from domains.models import Domain, OwnerEvent
from domains.policy import DIGEST_WINDOW
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import T0, go_live
from tests.fixtures.nameservers import (
    CHALLENGE,
    NS1,
    NS2,
    NS3,
    SCENARIOS,
    WILDCARD,
    WWW,
    Zone,
    disagreeing,
    undelegated,
)

pytestmark = pytest.mark.django_db
CODES = list(SCENARIOS)


def checked(zone: Zone, code: str, shop, alice) -> Domain:
    hostname = SCENARIOS[code](zone)
    domain = domain_add(project=shop, hostname=hostname, actor=alice)
    tasks.check_domain(domain.pk)
    return Domain.objects.get(pk=domain.pk)


def the_finding(domain: Domain, code: str) -> dict:
    assert domain.check_diagnosis is not None
    [finding] = [f for f in domain.check_diagnosis["findings"] if f["code"] == code]
    return finding


@pytest.mark.parametrize("code", CODES)
def test_the_api_shows_the_diagnosis(zone, shop, alice, api, code):
    domain = checked(zone, code, shop, alice)
    body = api.get(f"/v1/projects/shop/domains/{domain.hostname}").json()
    diagnosis = body["diagnosis"]
    assert diagnosis == domain.check_diagnosis
    assert set(diagnosis) == {"checked_at", "nameservers", "findings"}
    assert [f["code"] for f in diagnosis["findings"]] == [code]
    assert set(diagnosis["findings"][0]) == {"code", "message", "nameservers", "records"}
    assert {tuple(server) for server in diagnosis["nameservers"]} == {
        ("name", "address", "answer", "ttl", "agrees")
    }


def test_a_domain_never_checked_has_no_diagnosis_in_the_api(www, api):
    assert api.get(f"/v1/projects/shop/domains/{WWW}").json()["diagnosis"] is None


def test_the_openapi_document_describes_the_diagnosis(anon):
    schemas = anon.get("/v1/openapi.json").json()["components"]["schemas"]
    assert "diagnosis" in schemas["Domain"]["properties"]
    assert set(schemas["Diagnosis"]["properties"]) == {"checked_at", "nameservers", "findings"}
    finding = schemas["Finding"]["properties"]
    assert set(finding) == {"code", "message", "nameservers", "records"}
    assert set(schemas["FindingCodeEnum"]["enum"]) == set(FindingCode.values)


@pytest.mark.parametrize("code", CODES)
def test_domainstatus_prints_the_diagnosis(zone, shop, alice, code):
    domain = checked(zone, code, shop, alice)
    out = StringIO()
    call_command("domainstatus", domain.hostname, stdout=out)
    printed = json.loads(out.getvalue())["diagnosis"]
    assert printed == domain.check_diagnosis
    assert [f["code"] for f in printed["findings"]] == [code]


@pytest.mark.parametrize("code", CODES)
def test_the_domain_page_shows_each_server_and_the_finding(zone, shop, alice, alice_client, code):
    domain = checked(zone, code, shop, alice)
    page = alice_client.get(f"/dashboard/projects/shop/domains/{domain.hostname}/").content
    text = html.unescape(page.decode())
    panel = text[text.index('id="doctor"') : text.index("</section>", text.index('id="doctor"'))]
    assert "What the DNS says" in panel
    assert f'data-code="{code}"' in panel
    assert the_finding(domain, code)["message"] in panel
    for server in domain.check_diagnosis["nameservers"]:  # type: ignore[index]
        assert server["name"] in panel and server["answer"] in panel
    assert panel.count("<tr data-agrees") == len(domain.check_diagnosis["nameservers"])  # type: ignore[index]


def test_the_page_marks_the_server_that_is_right_and_the_one_that_is_not(
    zone, shop, alice, alice_client
):
    checked(zone, FindingCode.NAMESERVERS_DISAGREE, shop, alice)
    text = alice_client.get(f"/dashboard/projects/shop/domains/{WWW}/").content.decode()
    rows = text[text.index("<tbody>") : text.index("</tbody>")].split("<tr ")[1:]
    assert [(NS1 in row, "✓" in row, "✗" in row) for row in rows] == [
        (True, True, False),
        (False, False, True),
    ]
    assert NS2 in rows[1]


def test_the_page_shows_a_wildcards_delegation_in_the_row_of_the_server_that_has_it(
    zone, shop, alice, alice_client
):
    domain = domain_add(project=shop, hostname=undelegated(zone), actor=alice)
    zone.server(NS1).remove(CHALLENGE)
    zone.serve(CHALLENGE, "CNAME", domain.acme_challenge_target, on=(NS1,))
    tasks.check_domain(domain.pk)
    text = alice_client.get(f"/dashboard/projects/shop/domains/{WILDCARD}/").content.decode()
    rows = text[text.index("<tbody>") : text.index("</tbody>")].split("<tr ")[1:]
    record = f"{CHALLENGE} CNAME {domain.acme_challenge_target}."
    assert [(record in row, "✓" in row, "✗" in row) for row in rows] == [
        (True, True, False),
        (False, False, True),
    ]
    assert NS2 in rows[1]
    assert 'data-code="challenge_not_delegated"' in text


def test_servers_that_agree_show_no_finding_on_the_page(zone, www, alice_client):
    zone.resolver.add(WWW, "CNAME", "domains.petstore.localhost.")
    zone.serve(WWW, "CNAME", "domains.petstore.localhost.")
    tasks.check_domain(www.pk)
    text = alice_client.get(f"/dashboard/projects/shop/domains/{WWW}/").content.decode()
    assert "Every name server of the zone gives what the platform needs." in text
    assert "data-code=" not in text


def test_the_admin_shows_the_same_panel_read_only(zone, shop, alice, client, carol):
    domain = checked(zone, FindingCode.NAMESERVER_UNREACHABLE, shop, alice)
    client.force_login(carol)
    page = client.get(f"/admin/domains/domain/{domain.pk}/change/").content.decode()
    assert "What the DNS says" in page
    assert 'data-code="nameserver_unreachable"' in page
    assert NS3 in page
    assert 'name="check_diagnosis"' not in page  # shown, never edited


@pytest.fixture
def alice_with_mail(alice):
    alice.email = "alice@example.test"
    alice.save()
    return alice


@pytest.mark.parametrize("code", CODES)
def test_the_failing_domain_email_and_webhook_carry_the_findings(
    zone, shop, alice_with_mail, smtp_server, time_machine, code
):
    time_machine.move_to(T0, tick=False)
    domain = go_live(
        domain_add(project=shop, hostname=SCENARIOS[code](zone), actor=alice_with_mail)
    )
    tasks.check_domains([domain.pk])  # the sweep's batch: a live domain's check fails
    failing = OwnerEvent.objects.get(domain=domain, type="domain.failing")
    message = the_finding(Domain.objects.get(pk=domain.pk), code)["message"]
    assert failing.data["findings"] == [{"code": code, "message": message}]
    body = json.loads(payload(failing))
    assert body["data"]["findings"] == [{"code": code, "message": message}]

    time_machine.move_to(T0 + DIGEST_WINDOW + timedelta(seconds=1), tick=False)
    for delivery_id in CHANNELS["email"].due():
        tasks.deliver("email", delivery_id)
    [mail] = smtp_server.messages
    assert f"What the DNS says: {message}" in smtp_server.text(mail)
    assert message in html.unescape(smtp_server.html(mail))


def test_a_disagreement_on_a_live_domain_that_still_verifies_mails_nothing(
    zone, shop, alice_with_mail, smtp_server
):
    """Findings ride along with a failing check; they are no event of their own."""
    disagreeing(zone)
    zone.resolver.remove(WWW)
    zone.resolver.add(WWW, "CNAME", "domains.petstore.localhost.")
    domain = go_live(domain_add(project=shop, hostname=WWW, actor=alice_with_mail))
    tasks.check_domains([domain.pk])
    assert not OwnerEvent.objects.filter(domain=domain, type="domain.failing").exists()
