"""Settings → Account: the owner sets the address owner mail goes to. Asking takes the
current password (unless typed within the re-authentication window); a new address gets a
link (through a real SMTP server on loopback) and is used only once the link comes back,
signed in as the same owner, once, and never after a later change of the address; the form
says what is wrong."""

from __future__ import annotations

import base64
import contextlib
import re
import threading
import zlib
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import EventType
from domains.models import OwnerEmailChange
from domains.policy import DIGEST_WINDOW, EMAIL_CONFIRMATIONS_PER_HOUR
from domains.services.events import record_owner_event
from petstore.http.reauth import REAUTHENTICATION_WINDOW
from tests.fixtures.domains import T0
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.django_db
ACCOUNT = "/dashboard/settings/account/"
LINK = re.compile(r"https?://\S+/dashboard/settings/account/confirm/(\S+)/")


def ask(client, email: str, password: str | None = PASSWORD):
    """The account form sent with `email` (and the password, unless None)."""
    body = {"email": email} | ({"current_password": password} if password is not None else {})
    return client.post(ACCOUNT, body)


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
    for _ in range(EMAIL_CONFIRMATIONS_PER_HOUR):  # a mail not sent is not counted
        assert ask(alice_client, "alice@new.example").status_code == 400
    smtp_server.refuse = False
    assert ask(alice_client, "alice@new.example").status_code == 302


def error_of(answer, field: str) -> str:
    page = answer.content.decode()
    return page[page.index(f'id="{field}-errors"') :]


def test_asking_takes_the_current_password_unless_typed_within_the_window(
    alice_client, alice, smtp_server, time_machine
):
    time_machine.move_to(T0, tick=False)
    form = alice_client.get(ACCOUNT).content.decode()
    assert 'name="current_password"' in form and 'autocomplete="current-password"' in form
    missing = ask(alice_client, "alice@new.example", password=None)
    assert missing.status_code == 400
    assert "Type your current password to make this change." in error_of(
        missing, "current_password"
    )
    wrong = ask(alice_client, "alice@new.example", password="not it")
    assert "That is not your current password." in error_of(wrong, "current_password")
    assert smtp_server.messages == []

    assert ask(alice_client, "alice@new.example").status_code == 302
    time_machine.move_to(T0 + REAUTHENTICATION_WINDOW - timedelta(seconds=1), tick=False)
    assert 'name="current_password"' not in alice_client.get(ACCOUNT).content.decode()
    assert ask(alice_client, "alice@other.example", password=None).status_code == 302
    assert len(smtp_server.messages) == 2

    time_machine.move_to(T0 + REAUTHENTICATION_WINDOW, tick=False)
    assert ask(alice_client, "alice@third.example", password=None).status_code == 400
    assert len(smtp_server.messages) == 2


def readable(token: str) -> str:
    """Whatever a token says to someone without the key: each part base64-decoded (and
    inflated when it is compressed), as Django's signing writes them."""
    said = []
    for part in token.split(":"):
        try:
            raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except ValueError:
            continue
        with contextlib.suppress(zlib.error):
            raw = zlib.decompress(raw)
        said.append(raw.decode("latin-1"))
    return " ".join(said)


def test_a_link_says_nothing_of_whose_it_is_and_the_database_keeps_only_its_digest(
    alice_client, alice, smtp_server
):
    alice.email = "alice@old.example"
    alice.save()
    ask(alice_client, "alice@new.example")
    ask(alice_client, "alice@new.example")
    first, second = (link_in(mail).split("/")[-2] for mail in smtp_server.messages)
    assert first != second
    for token in (first, second):
        said = readable(token)
        assert "alice@" not in said and "old.example" not in said and '"user"' not in said
    stored = list(OwnerEmailChange.objects.values_list("digest", flat=True))
    assert len(stored) == 2 and first not in stored and second not in stored


def test_a_link_is_refused_after_the_address_changed_and_changed_back(
    alice_client, alice, smtp_server
):
    alice.email = "a@example.test"
    alice.save()
    ask(alice_client, "b@example.test")
    ask(alice_client, "c@example.test")
    to_b, to_c = (link_in(mail) for mail in smtp_server.messages)
    assert alice_client.post(to_b).status_code == 302  # A → B
    ask(alice_client, "a@example.test")
    back_to_a = link_in(smtp_server.messages[-1])
    assert alice_client.post(back_to_a).status_code == 302  # B → A
    alice.refresh_from_db()
    assert alice.email == "a@example.test"

    # Each was made while the address was A, and it is A again: neither works.
    for stale in (to_b, to_c):
        assert alice_client.get(stale).status_code == 400
        refused = alice_client.post(stale)
        assert refused.status_code == 400
        assert "This link is used up" in refused.content.decode()
    alice.refresh_from_db()
    assert alice.email == "a@example.test"


@pytest.mark.django_db(transaction=True)
def test_requests_at_the_same_moment_send_no_more_mails_than_the_limit(alice, smtp_server):
    """Twelve POSTs from one signed-in session, each on its own thread and database
    connection, released together: the limit holds, the others are told why."""
    owner = Client()
    owner.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    requests = 12
    barrier = threading.Barrier(requests)
    statuses: list[int] = [0] * requests

    def send(n: int) -> None:
        try:
            client = Client()
            client.cookies = owner.cookies
            barrier.wait(timeout=30)
            statuses[n] = ask(client, f"alice+{n}@example.test", password=None).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [302] * EMAIL_CONFIRMATIONS_PER_HOUR + [429] * (
        requests - EMAIL_CONFIRMATIONS_PER_HOUR
    )
    assert len(smtp_server.messages) == EMAIL_CONFIRMATIONS_PER_HOUR
