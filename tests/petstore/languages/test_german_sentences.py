"""What was said before the reader came, in German: a failed check and each finding of the
domain doctor (made by real name servers on loopback), a refusal of a service, the digest's
"what happened" line, each Activity line a service writes and the notice of a key that ends
are stored once, in English for the API and the webhooks, and read on a German page or in a
German mail with no sentence of the English catalogue left (petstore/sentences.py). The
refusals of a host name at Add domain and of a webhook URL are said on the German form."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import Action, EventType, State
from domains.models import Delivery, Domain, DomainEvent, OwnerEvent
from domains.policy import DIGEST_WINDOW
from domains.services import certificates, keys, redirects, scheduling
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.events import record_owner_event
from domains.services.projects import project_set_primary
from domains.services.verification import domain_check
from domains.services.webhooks import endpoint_create
from petstore.models import AccountLanguage
from tests.fixtures.domains import T0, TARGET, go_live
from tests.fixtures.nameservers import SCENARIOS, WWW
from tests.petstore.languages.english import english_left, english_runs, visible_text

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def runs():
    return english_runs("de")


def german_client(user) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.force_login(user)
    return client


@pytest.mark.parametrize("code", list(SCENARIOS))
def test_a_failed_check_and_its_finding_read_german(zone, shop, alice, runs, code):
    domain = domain_add(project=shop, hostname=SCENARIOS[code](zone), actor=alice)
    tasks.check_domain(domain.pk)
    domain = Domain.objects.get(pk=domain.pk)
    assert domain.check_code != "ok" and domain.check_diagnosis is not None
    [finding] = domain.check_diagnosis["findings"]
    assert finding["code"] == code
    client = german_client(alice)
    for path in (
        f"/dashboard/projects/shop/domains/{domain.hostname}/",
        "/dashboard/projects/shop/domains/",
    ):
        text = visible_text(client.get(path).content.decode())
        assert not english_left(text, runs), f"{path} still says {english_left(text, runs)}"
    page = visible_text(
        client.get(f"/dashboard/projects/shop/domains/{domain.hostname}/").content.decode()
    )
    # Stored in English, read in German: the German sentences stand where the English ones are
    # stored.
    assert domain.check_message not in page and finding["message"] not in page
    assert domain.check_message_shown in page
    english = Client(HTTP_ACCEPT_LANGUAGE="en")
    english.force_login(alice)
    text = html.unescape(
        english.get(f"/dashboard/projects/shop/domains/{domain.hostname}/").content.decode()
    )
    assert domain.check_message in text and finding["message"] in text


def test_a_finding_quoting_what_the_servers_answered_reads_german(zone, shop, alice, runs):
    """No record anywhere yet: the finding says what each server gives, "no record", which
    is the platform's word (stored in English) and read in German inside the sentence."""
    domain = domain_add(project=shop, hostname=WWW, actor=alice)
    tasks.check_domain(domain.pk)
    domain = Domain.objects.get(pk=domain.pk)
    assert domain.check_diagnosis is not None
    [finding] = domain.check_diagnosis["findings"]
    assert finding["code"] == "nameservers_wrong" and finding["message"].endswith(
        "give no record. Create or correct the record at your DNS provider; the next check "
        "sees it as soon as the provider publishes it."
    )
    text = page_text(german_client(alice), f"/dashboard/projects/shop/domains/{domain.hostname}/")
    said_german(text, "antworten: kein Eintrag. Legen Sie den Eintrag", runs)


def test_a_refusal_reads_german(shop, sketch, alice, www, runs):
    client = german_client(alice)
    refusals = [
        ("shop", "www.example.test", "ist diesem Projekt bereits hinzugefügt"),
        ("sketch", "www.example.test", "brauchen den Pro-Tarif oder höher"),
    ]
    for project, hostname, german in refusals:
        page = client.post(f"/dashboard/projects/{project}/domains/add/", {"hostname": hostname})
        text = visible_text(page.content.decode())
        assert german in text
        assert not english_left(text, runs), f"{project}: {english_left(text, runs)}"


def test_the_digest_says_what_happened_in_german(
    zone, shop, alice, smtp_server, time_machine, runs
):
    alice.email = "alice@example.test"
    alice.save()
    AccountLanguage.objects.create(user=alice, language="de")
    time_machine.move_to(T0, tick=False)
    [code] = list(SCENARIOS)[:1]
    domain = go_live(domain_add(project=shop, hostname=SCENARIOS[code](zone), actor=alice))
    tasks.check_domains([domain.pk])  # the sweep's batch: a live domain's check fails
    failing = OwnerEvent.objects.get(domain=domain, type="domain.failing")
    what, finding = failing.data["what"], failing.data["findings"][0]["message"]
    time_machine.move_to(T0 + DIGEST_WINDOW + timedelta(seconds=1), tick=False)
    for delivery_id in CHANNELS["email"].due():
        tasks.deliver("email", delivery_id)
    [mail] = smtp_server.messages
    for body in (smtp_server.text(mail), visible_text(smtp_server.html(mail))):
        assert what not in body and finding not in body  # the outbox's English, said in German
        assert domain.hostname in body
        assert not english_left(body, runs), english_left(body, runs)


def page_text(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, path
    return visible_text(response.content.decode())


def said_german(text: str, german: str, runs: dict[str, str]) -> None:
    assert german in text
    assert not english_left(text, runs), english_left(text, runs)


@pytest.mark.parametrize(
    ("hostname", "german"),
    [
        ("https://shop.example.com/", "ohne Schema, Pfad oder Leerzeichen"),
        ("www.*.example.com", "Ein Platzhalter ist nur ein vorangestelltes *."),
        ("192.0.2.1", "keine IP-Adresse"),
        ("shop.example.com:8080", "Domainnamen ohne Port ein"),
        ("a" * 64 + ".example.com", "Jeder Teil eines Domainnamens darf höchstens 63 Zeichen"),
        ("-ab.example.com", "'-ab.example.com' ist kein gültiger Domainname"),
        ("example", "vollständigen Domainnamen mit Punkt"),
        ("co.uk", "co.uk ist ein öffentliches Suffix"),
        ("shop.{platform}", "Namen unter {platform} gehören der Plattform"),
        ("ca.platform.test", "ca.platform.test ist einer der eigenen Namen der Plattform"),
        ("shop.platform.test", "shop.platform.test liegt unter platform.test"),
    ],
)
def test_a_host_name_refused_at_add_is_said_in_german(
    shop, alice, runs, settings, hostname, german
):
    # The platform's own names: its CA's, and its API's registrable domain.
    settings.DOMAINS_CA_IDENTIFIER = "ca.platform.test"
    settings.API_BASE_URL = "https://api.platform.test/v1"
    names = {"platform": settings.PLATFORM_DOMAIN}
    page = german_client(alice).post(
        "/dashboard/projects/shop/domains/add/", {"hostname": hostname.format(**names)}
    )
    assert page.status_code == 400
    said_german(visible_text(page.content.decode()), german.format(**names), runs)
    assert not Domain.objects.exists()


WEBHOOK_REFUSALS = [
    ("https://user:secret@hooks.example.test/", "Geben Sie eine gültige URL ein"),
    ("http://hooks.example.test/", "muss mit https:// beginnen"),
    ("https://hooks.example.test:22/", "muss 443 oder 8443 (HTTPS) sein, nicht 22"),
    ("https://shop.{platform}/", "nicht auf die eigenen Hosts dieser Plattform zeigen"),
    (
        "https://10.0.0.1/",
        "10.0.0.1 aufgelöst, das keine öffentliche Adresse ist; Webhooks gehen nur an",
    ),
    ("https://nowhere.example.test/", "wird zu keiner Adresse aufgelöst"),
]


@pytest.mark.parametrize(("url", "german"), WEBHOOK_REFUSALS)
def test_a_webhook_url_refused_is_said_in_german(
    shop, alice, runs, dns_server, clean_webhook_limits, settings, url, german
):
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    url = url.format(platform=settings.PLATFORM_DOMAIN)
    page = german_client(alice).post(
        "/dashboard/settings/notifications/webhooks/add/",
        {"project": shop.pk, "url": url, "events": ["domain.failing"]},
    )
    assert page.status_code == 400
    said_german(visible_text(page.content.decode()), german, runs)


def test_a_webhook_url_whose_name_servers_are_silent_is_said_in_german(
    shop, alice, runs, clean_webhook_limits, settings
):
    # No dns_server here: the platform's resolver is a port nobody answers on.
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    page = german_client(alice).post(
        "/dashboard/settings/notifications/webhooks/add/",
        {"project": shop.pk, "url": "https://hooks.example.com/", "events": ["domain.failing"]},
    )
    assert page.status_code == 400
    said_german(
        visible_text(page.content.decode()),
        "Die Nameserver von hooks.example.com haben nicht rechtzeitig geantwortet",
        runs,
    )


def test_a_redirects_lines_and_the_primary_domains_read_german(shop, alice, runs):
    """Saved, paused while its target is not served, resumed, and removed with its target,
    which was the primary domain."""
    apex = go_live(domain_add(project=shop, hostname="example.test", actor=alice))
    www = go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    redirects.redirect_save(project=shop, from_domain=www, to_domain=apex, actor=alice)
    project_set_primary(project=shop, domain=apex, actor=alice)
    client = german_client(alice)
    said_german(
        page_text(client, "/dashboard/projects/shop/domains/example.test/"),
        "Primäre Domain: example.test",
        runs,
    )
    www_page = "/dashboard/projects/shop/domains/www.example.test/"
    for state, german in [
        (
            State.MISCONFIGURED,
            "example.test wird hier nicht ausgeliefert (Nicht mehr ausgeliefert), daher erhalten "
            "Besucher von www.example.test dessen eigene Seite",
        ),
        (
            State.ACTIVE,
            "example.test wird wieder ausgeliefert, daher werden Besucher von "
            "www.example.test wieder dorthin geschickt",
        ),
    ]:
        apex = go_live(apex, state)  # as a failing check, or a passing one, leaves it
        redirects.redirects_follow_target(target=apex)
        said_german(page_text(client, www_page), german, runs)
    domain_remove(domain=apex, actor=alice)
    project_set_primary(project=shop, domain=None, actor=alice)
    text = page_text(client, "/dashboard/projects/shop/domains/")
    for german in (
        "www.example.test -> example.test, mit example.test entfernt",
        "example.test war die primäre Domain; wieder ist es die eigene Adresse des Projekts.",
        "Primäre Domain: keine",
    ):
        said_german(text, german, runs)


def test_a_rival_claim_reads_german_to_the_holder(shop, bobs, alice, bob, runs):
    go_live(domain_add(project=shop, hostname="www.example.test", actor=alice))
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    said_german(
        page_text(german_client(alice), "/dashboard/projects/shop/domains/www.example.test/"),
        "Ein anderes Projekt hat www.example.test hinzugefügt. Es kann den Namen nicht "
        "übernehmen, ohne die Kontrolle mit einem TXT-Eintrag zu belegen",
        runs,
    )


def test_a_claim_dropped_by_the_sweep_reads_german(shop, alice, runs):
    domain_add(project=shop, hostname="www.example.test", actor=alice)
    days = settings.DOMAINS_CLAIM_EXPIRY_DAYS
    assert scheduling.claims_expire(now=timezone.now() + timedelta(days=days, hours=1)) == 1
    said_german(
        page_text(german_client(alice), "/dashboard/projects/shop/domains/"),
        f"www.example.test wurde in {days} Tagen nie verifiziert, daher wurde der Anspruch "
        "verworfen.",
        runs,
    )


def test_a_certificate_issued_by_the_local_ca_reads_german(dns_server, shop, alice, runs):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    domain_check(domain_id=domain.pk)
    certificate = certificates.certificate_issue(domain_id=domain.pk)
    assert certificate is not None
    said_german(
        page_text(german_client(alice), "/dashboard/projects/shop/domains/www.example.test/"),
        f"Seriennummer {certificate.serial}, gültig bis {certificate.not_after:%Y-%m-%d}",
        runs,
    )
    line = DomainEvent.objects.get(domain=domain, action=Action.CERTIFICATE_ISSUED)
    assert line.message.startswith(f"Serial {certificate.serial}, valid until ")


def test_the_notice_of_a_key_that_ends_is_mailed_in_german(shop, alice, smtp_server, runs):
    alice.email = "alice@example.test"
    alice.save()
    AccountLanguage.objects.create(user=alice, language="de")
    key = keys.key_create(user=alice, name="deploy bot", days=6).api_key
    assert keys.keys_expiring_tell() == 1
    event = OwnerEvent.objects.get(type=EventType.KEY_EXPIRING)
    assert event.data["what"].startswith(f"The API key {key.display_prefix} (deploy bot)")
    Delivery.objects.filter(channel="email").update(next_attempt_at=timezone.now())
    for delivery_id in CHANNELS["email"].due():
        tasks.deliver("email", delivery_id)
    [mail] = smtp_server.messages
    german = (
        f"Der API-Schlüssel {key.display_prefix} (deploy bot) von alice läuft am "
        f"{key.expires_at:%Y-%m-%d %H:%M} UTC ab."
    )
    for body in (smtp_server.text(mail), visible_text(smtp_server.html(mail))):
        said_german(body, german, runs)


def test_the_doctors_table_says_a_server_without_address_in_german(dns_server, shop, alice, runs):
    # example.test's name server has no A or AAAA record on the loopback server.
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    checked = domain_check(domain_id=domain.pk).domain
    assert checked is not None and checked.check_diagnosis is not None
    answers = [server["answer"] for server in checked.check_diagnosis["nameservers"]]
    assert "no address (its name has no A or AAAA record)" in answers  # stored in English
    said_german(
        page_text(german_client(alice), "/dashboard/projects/shop/domains/www.example.test/"),
        "keine Adresse (sein Name hat keinen A- oder AAAA-Eintrag)",
        runs,
    )


def test_a_webhook_refused_at_delivery_reads_german_in_its_log(
    shop, www, alice, runs, dns_server, clean_webhook_limits, settings
):
    """The address is checked again at each attempt: the log says why in the reader's
    language, the stored answer (the API's) stays English."""
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    dns_server.add("hooks.example.com", "A", "8.8.8.8")
    made = endpoint_create(
        project=shop, url="https://hooks.example.com/", events=["domain.failing"]
    )
    record_owner_event(project=shop, domain=www, type=EventType.DOMAIN_FAILING)
    dns_server.remove("hooks.example.com")
    dns_server.add("hooks.example.com", "A", "10.0.0.5")
    later = timezone.now() + timedelta(seconds=2)
    [delivery_id] = CHANNELS["webhook"].due(now=later)
    CHANNELS["webhook"].deliver(delivery_id=delivery_id, now=later)

    attempt = Delivery.objects.get(pk=delivery_id).attempt_log.get()
    assert attempt.response.startswith("hooks.example.com resolves to 10.0.0.5, which is not")
    page = german_client(alice).get(
        reverse("dashboard:webhook_detail", kwargs={"pk": made.endpoint.pk})
    )
    said_german(
        visible_text(page.content.decode()),
        "hooks.example.com wird zu 10.0.0.5 aufgelöst, das keine öffentliche Adresse ist",
        runs,
    )
