"""Each change the owner must hear about is recorded once, by the service that makes it, in
its own transaction: the outbox rows (OwnerEvent) every channel reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from domains import tasks
from domains.choices import ACTION_NEEDED_EVENTS, EventType, State
from domains.models import OwnerEvent
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.redirects import redirect_save
from domains.services.scheduling import claims_expire
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def types(**filters) -> list[str]:
    return list(OwnerEvent.objects.filter(**filters).order_by("pk").values_list("type", flat=True))


def test_the_event_types_and_the_default_choice():
    assert set(EventType.values) == {
        "domain.active", "domain.failing", "domain.stopped", "domain.recovered",
        "certificate.renewal_failed", "claim.contested", "claim.lost", "claim.expired",
        "redirect.paused", "key.expiring",
    }  # fmt: skip
    assert set(EventType) - {"domain.active", "domain.recovered"} == ACTION_NEEDED_EVENTS


def test_a_domain_that_fails_stops_and_comes_back_tells_each_step_once(
    dns_server, www, time_machine
):
    time_machine.move_to(T0, tick=False)
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    tasks.enqueue(domain_check(domain_id=www.pk).next_steps)
    certificates.certificate_issue(domain_id=www.pk)
    dns_server.remove("www.example.test")
    for hours in (1, 2, 49, 50):  # failing, still failing, stopped, still stopped
        time_machine.move_to(T0 + timedelta(hours=hours), tick=False)
        tasks.check_domains([www.pk])
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    time_machine.move_to(T0 + timedelta(hours=51), tick=False)
    domain_check(domain_id=www.pk)
    assert types(domain=www) == [
        "domain.active", "domain.failing", "domain.stopped", "domain.recovered"
    ]  # fmt: skip
    failing = OwnerEvent.objects.get(type="domain.failing")
    assert failing.data["stops_serving_at"] == "2026-11-04T13:00:00+00:00"
    assert failing.data["path"] == "/dashboard/projects/shop/domains/www.example.test/"
    assert failing.data["what_to_do"]


def test_a_passing_check_after_a_dns_blip_tells_nothing(dns_server, www, time_machine):
    time_machine.move_to(T0, tick=False)
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain_check(domain_id=www.pk)
    assert types() == []  # verified, not yet active: nothing to tell yet


def test_a_rival_claim_tells_the_holder_and_expiry_tells_the_claimant(www, bobs, bob):
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    assert types(project=www.project) == ["claim.contested"]
    claims_expire(now=timezone.now() + timedelta(days=8))
    expired = OwnerEvent.objects.filter(type="claim.expired")
    assert sorted(expired.values_list("project__slug", flat=True)) == ["bobs", "shop"]
    assert all(event.domain is None for event in expired)


def test_a_renewal_refused_says_why_and_when_the_certificate_expires(dns_server, www, time_machine):
    time_machine.move_to(T0, tick=False)
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    tasks.enqueue(domain_check(domain_id=www.pk).next_steps)
    certificate = certificates.certificate_issue(domain_id=www.pk)
    assert certificate is not None
    # At renewal time the domain has not passed a check for a day: renewal is refused.
    time_machine.move_to(certificate.renew_after + timedelta(minutes=1), tick=False)
    certificates.certificate_renew(domain_id=www.pk)
    [event] = OwnerEvent.objects.filter(type="certificate.renewal_failed")
    assert "Not renewed" in event.data["reason"]
    assert event.data["expires_at"] == certificate.not_after.isoformat()
    www.refresh_from_db()
    assert www.state == State.ACTIVE


def test_a_txt_takeover_tells_the_loser_and_pauses_its_redirect(dns_server, shop, bobs, alice, bob):
    apex, www = "example.test", "www.example.test"
    dns_server.add(apex, "A", TARGET_ADDRESS)
    dns_server.add(apex, "AAAA", TARGET_ADDRESS6)
    dns_server.add(www, "CNAME", TARGET + ".")
    mine = check(domain_add(project=shop, hostname=apex, actor=alice))
    source = check(domain_add(project=shop, hostname=www, actor=alice))
    redirect_save(project=shop, from_domain=source, to_domain=mine, actor=alice)
    theirs = domain_add(project=bobs, hostname=apex, actor=bob)
    dns_server.add(theirs.ownership_txt_name, "TXT", f'"{theirs.verification_token}"')
    assert check(theirs).is_live

    assert types(project=shop) == ["claim.contested", "claim.lost", "redirect.paused"]
    assert types(project=bobs) == []  # the winner is not told it won
    paused = OwnerEvent.objects.get(type="redirect.paused")
    assert paused.hostname == www
