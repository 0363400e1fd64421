"""Settings → Account: the owner sets the address owner mail goes to. A new address gets a
signed link (through a real SMTP server on loopback) and is used only once the link comes
back, signed in as the same owner; the form says what is wrong."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.cache import cache

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import EventType
from domains.policy import DIGEST_WINDOW, EMAIL_CONFIRMATIONS_PER_HOUR
from domains.services.events import record_owner_event
from domains.services.notifications import confirmations_sent_key
from tests.fixtures.domains import T0

pytestmark = pytest.mark.django_db
ACCOUNT = "/dashboard/settings/account/"
LINK = re.compile(r"https?://\S+/dashboard/settings/account/confirm/(\S+)/")


@pytest.fixture(autouse=True)
def no_confirmations_sent_yet(alice, bob):
    keys = [confirmations_sent_key(user.pk) for user in (alice, bob)]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


def ask(client, email: str):
    return client.post(ACCOUNT, {"email": email})


def link_in(mail) -> str:
    [found] = LINK.findall(mail.get_body(preferencelist=("plain",)).get_content())
    return f"{ACCOUNT}confirm/{found}/"


def mail_the_owner(shop, time_machine, smtp_server) -> list[str]:
    """A claim.expired event of shop, mailed as the worker would; to whom it went."""
    time_machine.move_to(T0, tick=False)
    record_owner_event(
        project=shop,
        domain=None,
        hostname="old.example.test",
        type=EventType.CLAIM_EXPIRED,
        message="old.example.test never verified.",
    )
    time_machine.move_to(T0 + DIGEST_WINDOW + timedelta(seconds=1), tick=False)
    for delivery_id in CHANNELS["email"].due():
        tasks.deliver("email", delivery_id)
    return [mail["To"] for mail in smtp_server.messages]


def test_the_navigation_leads_to_the_account_page(alice_client, shop):
    page = alice_client.get("/dashboard/").content.decode()
    assert f'href="{ACCOUNT}">Account</a>' in page
    settings_page = alice_client.get("/dashboard/settings/notifications/").content.decode()
    assert "no address yet" in settings_page and f'href="{ACCOUNT}"' in settings_page


def test_a_new_address_is_used_only_once_its_link_is_opened(
    alice_client, alice, shop, smtp_server, time_machine
):
    answer = ask(alice_client, "Alice@Example.TEST")
    assert answer.status_code == 302
    [confirmation] = smtp_server.messages
    assert confirmation["To"] == "Alice@example.test"
    assert confirmation["Subject"] == "Confirm your address for domain notifications"
    page = alice_client.get(ACCOUNT).content.decode()
    assert "A confirmation link is on its way to Alice@example.test" in page
    alice.refresh_from_db()
    assert alice.email == ""  # not before it is confirmed
    smtp_server.messages.clear()
    assert mail_the_owner(shop, time_machine, smtp_server) == []  # no address: skipped

    link = link_in(confirmation)
    shown = alice_client.get(link)
    assert shown.status_code == 200
    assert "goes to <strong>Alice@example.test</strong>" in shown.content.decode()
    alice.refresh_from_db()
    assert alice.email == ""  # opening the page (or a mail scanner's GET) changes nothing
    confirmed = alice_client.post(link, follow=True).content.decode()
    assert "Owner mail now goes to Alice@example.test." in confirmed
    alice.refresh_from_db()
    assert alice.email == "Alice@example.test"

    time_machine.move_to(T0 + timedelta(hours=1), tick=False)
    record_owner_event(
        project=shop, domain=None, hostname="new.example.test", type=EventType.CLAIM_EXPIRED,
        message="new.example.test never verified.",
    )  # fmt: skip
    time_machine.move_to(T0 + timedelta(hours=1) + DIGEST_WINDOW * 2, tick=False)
    for delivery_id in CHANNELS["email"].due():
        tasks.deliver("email", delivery_id)
    assert [mail["To"] for mail in smtp_server.messages] == ["Alice@example.test"]


def test_a_change_tells_the_previous_address_and_each_link_works_once(
    alice_client, alice, smtp_server
):
    alice.email = "alice@old.example"
    alice.save()
    ask(alice_client, "alice@new.example")
    ask(alice_client, "alice@other.example")
    first, second = (link_in(mail) for mail in smtp_server.messages)
    smtp_server.messages.clear()
    assert alice_client.post(second).status_code == 302
    alice.refresh_from_db()
    assert alice.email == "alice@other.example"
    [told] = smtp_server.messages
    assert told["To"] == "alice@old.example"
    assert "now goes to alice@other.example" in told.get_body().get_content()

    for used in (first, second):  # the address changed since either was sent
        refused = alice_client.post(used)
        assert refused.status_code == 400
        assert "This link is used up: owner mail has gone to alice@other.example" in (
            refused.content.decode()
        )
    alice.refresh_from_db()
    assert alice.email == "alice@other.example"


def test_a_link_is_refused_for_another_account_when_old_or_when_altered(
    alice_client, alice, bob, client, smtp_server, time_machine
):
    time_machine.move_to(T0, tick=False)
    ask(alice_client, "alice@new.example")
    link = link_in(smtp_server.messages[0])
    client.force_login(bob)
    refused = client.get(link)
    assert refused.status_code == 400
    assert "This link was sent for another account" in refused.content.decode()
    assert client.post(link).status_code == 400
    bob.refresh_from_db()
    assert bob.email == ""

    client.force_login(alice)
    altered = client.get(link.replace("/confirm/", "/confirm/x"))
    assert "not a confirmation link of ours" in altered.content.decode()
    time_machine.move_to(T0 + timedelta(days=2, seconds=1), tick=False)
    expired = client.post(link)
    assert expired.status_code == 400
    assert "more than 2 days old" in expired.content.decode()
    alice.refresh_from_db()
    assert alice.email == ""


def test_a_signed_out_visitor_is_sent_to_sign_in_first(alice_client, client, smtp_server):
    ask(alice_client, "alice@new.example")
    link = link_in(smtp_server.messages[0])
    client.logout()
    answer = client.get(link)
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("not an address", "not an email address (name@example.com)"),
        ("alice@", "not an email address"),
        ("", "This field is required."),
        ("a" * 250 + "@example.test", "Ensure this value has at most 254 characters"),
    ],
)
def test_a_bad_address_is_said_on_the_form(alice_client, alice, smtp_server, typed, says):
    answer = ask(alice_client, typed)
    assert answer.status_code == 400
    errors = answer.content.decode()
    errors = errors[errors.index('id="email-errors"') :]
    assert says in errors
    assert smtp_server.messages == []


def test_the_same_address_and_too_many_mails_are_refused(alice_client, alice, smtp_server):
    alice.email = "alice@example.test"
    alice.save()
    same = ask(alice_client, "alice@example.test")
    assert same.status_code == 400
    assert "Owner mail already goes to alice@example.test." in same.content.decode()
    for n in range(EMAIL_CONFIRMATIONS_PER_HOUR):
        assert ask(alice_client, f"alice+{n}@example.test").status_code == 302
    too_many = ask(alice_client, "alice+more@example.test")
    assert too_many.status_code == 429
    assert "5 confirmation mails were sent in the last hour" in too_many.content.decode()
    assert len(smtp_server.messages) == EMAIL_CONFIRMATIONS_PER_HOUR


def test_a_mail_server_that_refuses_is_said_on_the_form(alice_client, alice, smtp_server):
    smtp_server.refuse = True
    answer = ask(alice_client, "alice@new.example")
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "The confirmation mail to alice@new.example could not be sent" in page
    assert "Try again later" in page  # the server's own words
    alice.refresh_from_db()
    assert alice.email == ""
