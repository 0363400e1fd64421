"""Add, verify and remove a domain over HTTP with a bearer key, as a script would: the
DNS record on the loopback DNS server, the check run as the worker runs it."""

from __future__ import annotations

from domains.models import Domain, DomainEvent
from domains.tasks import check_domain, issue_certificate
from tests.domains.api.helpers import SHOP, post
from tests.fixtures.domains import TARGET


def test_a_key_adds_verifies_and_removes_a_domain(
    api, alice, shop, dns_server, django_capture_on_commit_callbacks
):
    added = post(api, f"{SHOP}/domains", {"hostname": "WWW.Example.test."})
    assert added.status_code == 201, added.content
    domain = added.json()
    assert added["Location"] == "http://testserver/v1/projects/shop/domains/www.example.test"
    assert domain["hostname"] == "www.example.test"
    assert domain["state"] == "pending"
    assert domain["dns_records"] == [
        {
            "type": "CNAME",
            "name": "www",
            "value": TARGET,
            "ttl": 3600,
            "note": "Remove any A or AAAA record on this name; it would block the CNAME.",
        }
    ]
    assert domain["claim"] == {"contested": False}
    assert domain["certificate"] is None

    dns_server.add("www.example.test", "CNAME", TARGET + ".")  # the owner creates the record
    with django_capture_on_commit_callbacks() as queued:
        verify = post(api, f"{SHOP}/domains/www.example.test/verify")
    assert verify.status_code == 202, verify.content
    assert verify.json()["check"]["in_progress"] is True
    assert len(queued) == 1  # the check, queued after the commit as the dashboard does

    check_domain(Domain.objects.get(hostname="www.example.test").pk)  # what the worker runs

    shown = api.get(f"{SHOP}/domains/www.example.test").json()
    assert shown["state"] == "issuing"  # verified; its certificate is ordered
    assert shown["is_live"] is True
    assert shown["check"]["code"] == "ok"
    assert shown["check"]["in_progress"] is False
    assert shown["check"]["last_checked_at"] is not None

    issue_certificate(Domain.objects.get(hostname="www.example.test").pk)
    shown = api.get(f"{SHOP}/domains/www.example.test").json()
    assert shown["state"] == "active"
    served = Domain.objects.get(hostname="www.example.test").certificate
    assert served is not None
    assert shown["certificate"] == {
        "issuer": served.issuer,
        "serial": served.serial,
        "not_before": served.not_before.isoformat().replace("+00:00", "Z"),
        "expires_at": served.not_after.isoformat().replace("+00:00", "Z"),
        "renew_after": served.renew_after.isoformat().replace("+00:00", "Z"),
    }
    assert shown["certificate_status"]["state"] == "issued"

    removed = api.delete(f"{SHOP}/domains/www.example.test")
    assert removed.status_code == 204
    assert api.get(f"{SHOP}/domains/www.example.test").status_code == 404
    assert not Domain.objects.exists()
    # The audit trail names the key's user, as it names the dashboard's.
    actions = list(
        DomainEvent.objects.filter(project=shop).order_by("pk").values_list("action", "actor")
    )
    assert [a for a, _ in actions][:2] == ["added", "verify_requested"]
    assert actions[-1] == ("removed", alice.pk)
