"""The dashboard in German: every page alice can open (the enumeration of
tests/security/dashboard.py), the sign-in and account pages, and every mail the platform
sends, rendered with German chosen, say no sentence of the English catalogue; the page says
which language it is in, a browser's Accept-Language chooses it, and the switch keeps its
choice across requests, across sign-ins and for the account's mail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from domains.channels.email import EmailChannel, notice_webhook_disabled
from domains.choices import EventType, Role
from domains.models import Delivery, Membership, OwnerEvent
from domains.services import invitations, notifications
from petstore import languages
from petstore.models import AccountLanguage
from tests.fixtures.people import PASSWORD, make_user
from tests.petstore.languages.english import english_left, english_runs, visible_text
from tests.security.dashboard import dashboard_urls_for

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def runs():
    return english_runs("de")


def german_client(user=None) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    if user is not None:
        client.force_login(user)
    return client


def test_every_dashboard_page_alice_opens_is_german(alices, alice, runs):
    client = german_client(alice)
    seen = 0
    for name, path in dashboard_urls_for(alices):
        response = client.get(path)
        if response.status_code != 200 or "text/html" not in response["Content-Type"]:
            continue  # an action (POST only), a redirect, or JSON
        seen += 1
        html = response.content.decode()
        assert '<html lang="de">' in html, name
        left = english_left(visible_text(html), runs)
        assert not left, f"{name} ({path}) still says {left}"
    assert seen >= 12  # the projects, domains, members, audit, keys, settings pages at least


def test_the_sign_in_and_password_pages_are_german(alice, runs):
    anonymous = german_client()
    pages = [anonymous.get(reverse("login"))]
    signed_in = german_client(alice)
    pages += [
        signed_in.get(reverse("password_change")),
        signed_in.get(reverse("password_change_done")),
    ]
    for response in pages:
        assert response.status_code == 200
        assert not english_left(visible_text(response.content.decode()), runs)


def test_accept_language_chooses_and_html_lang_says_it(alice):
    assert '<html lang="de">' in german_client().get(reverse("login")).content.decode()
    english = Client(HTTP_ACCEPT_LANGUAGE="en").get(reverse("login")).content.decode()
    assert '<html lang="en">' in english and "Sign in to manage" in english


def test_the_switch_persists_across_requests_sign_ins_and_into_mail(alice):
    browser = Client(HTTP_ACCEPT_LANGUAGE="en")
    browser.force_login(alice)
    answer = browser.post(reverse("set_language"), {"language": "de", "next": "/dashboard/"})
    assert answer.status_code == 302 and answer["Location"] == "/dashboard/"
    # The next pages, whatever the browser's Accept-Language says.
    assert '<html lang="de">' in browser.get("/dashboard/").content.decode()
    assert "Ihre Projekte" in browser.get("/dashboard/").content.decode()
    # The account keeps it: a sign-in on another browser restores it, and mail follows it.
    assert AccountLanguage.objects.get(user=alice).language == "de"
    assert languages.language_of(alice) == "de"
    other = Client(HTTP_ACCEPT_LANGUAGE="en")
    other.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert '<html lang="de">' in other.get("/dashboard/").content.decode()


def test_a_language_not_offered_is_refused_by_the_switch(alice):
    browser = german_client(alice)
    browser.post(reverse("set_language"), {"language": "xx", "next": "/dashboard/"})
    assert not AccountLanguage.objects.filter(user=alice).exists()


def _german(user) -> None:
    AccountLanguage.objects.create(user=user, language="de")


def test_every_mail_is_written_in_its_recipients_language(
    alices, alice, smtp_server, runs, django_capture_on_commit_callbacks
):
    """The owner's digest, a disabled webhook, an invitation and its acceptance, the
    confirmation of a new address and the notice to the old one: each in German for an
    account that chose German."""
    alice.email = "alice@example.com"
    alice.save()
    _german(alice)
    project = alices["project"]
    # The digest: one event of each type, mailed to alice as the project's owner.
    member = Membership.objects.get(project=project, user=alice)
    events = [
        OwnerEvent.objects.create(
            project=project,
            domain=alices["www"],
            hostname="www.example.com",
            type=kind,
            data={"stops_serving_at": (timezone.now() + timedelta(days=2)).isoformat()},
        )  # fmt: skip
        for kind in EventType
    ]
    deliveries = [
        Delivery.objects.create(channel="email", target_id=member.pk, event=event)
        for event in events
    ]
    assert EmailChannel().send(deliveries, timezone.now()).ok
    # A disabled webhook endpoint.
    endpoint = alices["endpoint"]
    endpoint.failing_since = timezone.now() - timedelta(days=3)
    endpoint.save()
    notice_webhook_disabled(endpoint_id=endpoint.pk)
    # An invitation from alice, accepted by a new account: alice is told.
    invited = invitations.member_invite(
        project=project, email="frank@example.com", role=Role.VIEWER, actor=alice
    )
    token = invited.link.rstrip("/").rsplit("/", 1)[-1]
    with django_capture_on_commit_callbacks(execute=True):  # the inviter is told on commit
        invitations.invitation_accept(token=token, user=make_user("frank"))
    # A new owner address, confirmed: the new one is asked, the old one told.
    notifications.owner_email_change_request(user=alice, email="alice@new.example")
    confirm_path = reverse("dashboard:account_confirm", args=["T"])[:-2]
    link = smtp_server.text(smtp_server.messages[-1]).split(confirm_path)[1]
    notifications.owner_email_confirm(user=alice, token=link.split("/")[0])

    subjects = [mail["Subject"] for mail in smtp_server.messages]
    assert len(subjects) == 6, subjects
    for mail in smtp_server.messages:
        bodies = [smtp_server.text(mail)]
        if mail.get_body(preferencelist=("html",)) is not None:
            bodies.append(visible_text(smtp_server.html(mail)))
        for body in [mail["Subject"], *bodies]:
            left = english_left(body, runs)
            assert not left, f"mail {mail['Subject']!r} still says {left}"
