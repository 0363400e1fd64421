"""The dashboard's URLs, built for alice's objects, for the tests that try them all as
someone else (test_tenancy.py) or as each role (test_access_matrix.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import URLPattern, reverse
from django.utils import timezone

from domains import urls as dashboard_urls
from domains.choices import EventType, Role
from domains.models import (
    Delivery,
    Invitation,
    Membership,
    OwnerEmailChange,
    OwnerEvent,
    WebhookEndpoint,
    link_digest,
    new_link_secret,
)
from domains.services.custom_domains import domain_add
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live
from tests.fixtures.people import PASSWORD, make_user

# URLs anybody may open: "" only sends visitors on to the dashboard (which signs them in).
PUBLIC = {""}
# Pages of the signed-in user's own (their notification choices, adding an endpoint to one
# of their projects, their address): nobody else's to reach. Another's confirmation link
# is refused with the reason (400), and changes nothing.
OWN = {
    "notification_settings", "webhook_add", "account", "account_confirm", "api_keys",
    "api_key_revoke",
}  # fmt: skip
# An invitation's page: whoever holds its link may open it (signed in or not) and is told
# what it offers; it changes nothing until accepted (tests/domains/dashboard/test_members*).
LINKS = {"invitation"}


@pytest.fixture
def alices(shop, alice):
    www = domain_add(project=shop, hostname="www.example.com", actor=alice)
    apex = domain_add(project=shop, hostname="example.com", actor=alice)
    entry = redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)
    # Rows as the webhook service and its dispatcher leave them (their URL checks are
    # tested in tests/domains/webhooks; here only who may reach them counts).
    endpoint = WebhookEndpoint.objects.create(
        project=shop, url="https://hooks.example.com/in", events=[EventType.CLAIM_LOST],
        secret="whsec_dGVzdA==",
    )  # fmt: skip
    event = OwnerEvent.objects.create(
        project=shop, domain=www, hostname=www.hostname, type=EventType.CLAIM_LOST
    )
    delivery = Delivery.objects.create(channel="webhook", target_id=endpoint.pk, event=event)
    # The link alice's request for a new address mails her.
    secret = new_link_secret()
    OwnerEmailChange.objects.create(
        user=alice, digest=link_digest(secret), email="alice@new.example", was=alice.email
    )
    # A developer of shop, and an invitation of shop's still open.
    dana = Membership.objects.create(project=shop, user=make_user("dana"), role=Role.DEVELOPER)
    invited = new_link_secret()
    invitation = Invitation.objects.create(
        project=shop, email="erin@example.com", role=Role.VIEWER, invited_by=alice,
        token_hash=link_digest(invited), expires_at=timezone.now() + timedelta(days=7),
    )  # fmt: skip
    return {
        "project": shop, "www": www, "apex": apex, "entry": entry,
        "endpoint": endpoint, "delivery": delivery,
        "token": secret, "member": dana, "invitation": invitation, "invited": invited,
    }  # fmt: skip


def _arguments(alices, name: str) -> dict:
    """A value for every argument of the URL named `name`, pointing at alice's objects."""
    if name.startswith("webhook_"):
        pk = alices["endpoint"]
    elif name.startswith("member_"):
        pk = alices["member"]
    elif name.startswith("invitation_"):
        pk = alices["invitation"]
    else:
        pk = alices["entry"]
    return {
        "slug": "shop",
        "hostname": "www.example.com",
        "pk": pk.pk,
        "delivery_pk": alices["delivery"].pk,
        "token": alices["invited"] if name == "invitation" else alices["token"],
    }


def post_data(alices) -> dict[str, dict]:
    """A body each action would accept from alice herself, by URL name."""
    www, apex = alices["www"], alices["apex"]
    return {
        "domain_add": {"hostname": "new.example.com"},
        "domain_verify": {},
        "domain_remove": {"remove": "1"},
        "primary_set": {"domain": www.pk},
        "redirect_add": {"from_domain": www.pk, "to_domain": apex.pk, "status": 301},
        "redirect_edit": {"from_domain": apex.pk, "to_domain": www.pk, "status": 302},
        "redirect_delete": {},
        "webhook_add": {
            "project": alices["project"].pk,
            "url": "https://hooks.receiver.test/new",
            "events": [EventType.CLAIM_LOST],
        },
        "account": {"email": "alice@new.example", "current_password": PASSWORD},
        "account_confirm": {},
        "member_invite": {"email": "frank@example.com", "role": Role.VIEWER},
        "member_role": {"role": Role.VIEWER},
        "member_remove": {},
        "invitation_revoke": {},
        "ownership_transfer": {"member": alices["member"].pk},
        "member_leave": {},
    }


def dashboard_urls_for(alices) -> list[tuple[str, str]]:
    """(name, path) of every pattern in domains.urls, built for alice's objects."""
    found = []
    for pattern in dashboard_urls.urlpatterns:
        assert isinstance(pattern, URLPattern), "nested includes: extend this enumeration"
        arguments = _arguments(alices, pattern.name or "")
        names = list(pattern.pattern.converters)
        missing = [n for n in names if n not in arguments]
        assert not missing, f"{pattern.pattern}: give tests/security a value for {missing}"
        kwargs = {n: arguments[n] for n in names}
        name = pattern.name or str(pattern.pattern)
        path = reverse(f"dashboard:{pattern.name}", kwargs=kwargs) if pattern.name else "/"
        found.append((name, path))
    return found
