"""Two certificate authorities in order, each a Pebble of its own: the first behind the
test's front, which refuses new orders as rate limited or with a server error, is stopped
(its port closed), or signs more slowly than the platform waits; the second issuing. A new
domain and a renewal go Active from the second with no owner action, said on the Activity
feed and counted; a renewal asks the CA that issued its certificate first and reads its
renewal window there; the owner's CAA records decide which CAs may be asked at all, and a
refusal of theirs reaches no CA."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from domains import pki
from domains.choices import Action, CaSkipReason, CertState, CheckCode, State
from domains.models import Certificate, Domain, DomainEvent
from domains.services import certificates
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from petstore.metrics import store
from tests.domains.pki.acme_front import AcmeFront
from tests.fixtures.domains import TARGET
from tests.fixtures.pebble import running_pebble

pytestmark = pytest.mark.acme

FIRST_CA, SECOND_CA = "first-ca.example", "second-ca.example"
# Seconds the platform waits for a CA (DOMAINS_ACME_WAIT); the slow CA signs after more.
WAIT = 2


@pytest.fixture
def cas(acme_front, second_pebble, settings):
    """The front (before `pebble`) first, `second_pebble` second, each its own CAA name."""
    settings.DOMAINS_ACME_DIRECTORIES = [acme_front.directory, second_pebble.directory]
    settings.DOMAINS_ACME_CAA_IDENTITIES = [FIRST_CA, SECOND_CA]
    settings.DOMAINS_ACME_WAIT = WAIT
    return acme_front, second_pebble


def fail(front, fault: str) -> None:
    if fault == "rate_limited":
        front.rate_limited = 3600
    elif fault.isdigit():
        front.server_error = int(fault)
    elif fault == "down":
        front.stop()
    else:
        front.finalize_delay = WAIT + 2


def counted(name: str, **labels: str) -> float:
    return store.REGISTRY.get_sample_value(name, labels) or 0.0


def skips(ca: str, reason: str) -> float:
    return counted("petstore_acme_skips_total", ca=ca, reason=reason)


def issued_by(ca: str, *, fallback: bool) -> float:
    return counted("petstore_acme_certificates_issued_total", ca=ca, fallback=str(fallback).lower())


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("rate_limited", CaSkipReason.RATE_LIMITED),
        ("500", CaSkipReason.SERVER_ERROR),
        ("502", CaSkipReason.SERVER_ERROR),
        ("down", CaSkipReason.UNREACHABLE),
        ("slow", CaSkipReason.SLOW),
    ],
)
def test_a_new_domain_goes_active_from_the_second_ca_when_the_first_fails(
    verified, cas, pebble, fault, reason
):
    front, second = cas
    fail(front, fault)
    skipped_before = skips(front.directory, reason)
    issued_before = issued_by(second.directory, fallback=True)

    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None
    assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE
    assert certificate.ca_directory == second.directory
    assert second.issued() == [certificate.serial]
    assert certificate.serial not in pebble.issued()
    # Refused or down, the first CA never saw an order; slow, it saw one, abandoned.
    assert len(pebble.orders()) == (1 if fault == "slow" else 0)
    skipped, issued = DomainEvent.objects.filter(
        domain=verified, action__in=[Action.CA_SKIPPED, Action.CERTIFICATE_ISSUED]
    ).order_by("pk")
    assert skipped.action == Action.CA_SKIPPED
    assert skipped.message == (
        f"{front.host} did not issue: {reason.label}. The platform asked "
        f"{second.directory.split('/')[2]} instead."
    )
    assert issued.message.endswith(f"from {second.directory.split('/')[2]}")
    assert skips(front.directory, reason) == skipped_before + 1
    assert issued_by(second.directory, fallback=True) == issued_before + 1


def test_a_ca_that_limited_our_rate_is_not_asked_again_before_its_retry_after(
    verified, cas, dns_server, shop, alice
):
    front, second = cas
    front.rate_limited = 3600
    assert certificates.certificate_issue(domain_id=verified.pk) is not None
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    other = domain_add(project=shop, hostname="shop.example.test", actor=alice)
    domain_check(domain_id=other.pk)

    certificate = certificates.certificate_issue(domain_id=other.pk)

    assert certificate is not None and certificate.ca_directory == second.directory
    assert front.new_orders_refused == 1  # the first domain's order; the second's never sent
    line = DomainEvent.objects.filter(domain=other, action=Action.CA_SKIPPED).get()
    assert line.message.startswith(f"{front.host} did not issue: it limits the platform's rate.")


def test_a_renewal_goes_to_the_second_ca_when_the_one_that_issued_is_down(verified, cas, pebble):
    front, second = cas
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None and first.ca_directory == front.directory
    front.stop()
    Certificate.objects.filter(pk=first.pk).update(renew_after=timezone.now())

    renewed = certificates.certificate_renew(domain_id=verified.pk)

    assert renewed is not None and renewed.ca_directory == second.directory
    assert second.issued() == [renewed.serial]
    assert Domain.objects.get(pk=verified.pk).certificate == renewed
    line = DomainEvent.objects.filter(domain=verified, action=Action.CA_SKIPPED).get()
    assert line.message.startswith(f"{front.host} did not issue: it could not be reached.")


def test_a_renewal_asks_the_ca_that_issued_the_current_certificate_first(verified, cas, pebble):
    front, second = cas
    front.rate_limited = 3600
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None and first.ca_directory == second.directory
    front.rate_limited = None  # the first CA issues again, but did not issue this one
    Certificate.objects.filter(pk=first.pk).update(renew_after=timezone.now())

    renewed = certificates.certificate_renew(domain_id=verified.pk)

    assert renewed is not None and renewed.ca_directory == second.directory
    assert second.issued() == [first.serial, renewed.serial]
    assert pebble.orders() == []


def test_a_renewal_waits_out_a_rate_limit_its_certificate_has_the_time_for(verified, cas, pebble):
    """Pebble's certificates last five years: an hour's Retry-After leaves years, so the
    renewal waits for the CA that issued it rather than move to another."""
    front, second = cas
    first = certificates.certificate_issue(domain_id=verified.pk)
    assert first is not None and first.ca_directory == front.directory
    front.rate_limited = 3600
    Certificate.objects.filter(pk=first.pk).update(renew_after=timezone.now())

    with pytest.raises(pki.Unavailable) as waiting:
        certificates.certificate_renew(domain_id=verified.pk)

    assert waiting.value.reason == CaSkipReason.RATE_LIMITED
    assert waiting.value.retry_after > 3500
    assert second.orders() == []
    assert not DomainEvent.objects.filter(domain=verified, action=Action.CA_SKIPPED).exists()


def test_caa_naming_neither_ca_refuses_the_order_without_asking_either(
    verified, cas, pebble, dns_server
):
    front, second = cas
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')

    assert certificates.certificate_issue(domain_id=verified.pk) is None

    domain = Domain.objects.get(pk=verified.pk)
    assert domain.state == State.VERIFIED and domain.cert_state == CertState.BLOCKED
    assert domain.cert_code == CheckCode.CAA_BLOCKED
    assert f'CAA 0 issue "{FIRST_CA}"' in domain.cert_message
    assert pebble.orders() == [] and second.orders() == []


def test_caa_naming_only_the_second_ca_goes_to_it_without_asking_the_first(
    verified, cas, pebble, dns_server
):
    front, second = cas
    dns_server.add("example.test", "CAA", f'0 issue "{SECOND_CA}"')
    issued_before = issued_by(second.directory, fallback=False)

    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None and certificate.ca_directory == second.directory
    assert pebble.orders() == []
    # The owner's choice, not a failure of the first: no skip, and no fallback counted.
    assert not DomainEvent.objects.filter(domain=verified, action=Action.CA_SKIPPED).exists()
    assert issued_by(second.directory, fallback=False) == issued_before + 1


def test_the_renewal_window_is_read_from_the_ca_that_issued_the_certificate(
    verified, acme_front, second_pebble, settings, _pebble_tls
):
    """The first CA (a front of its own before `second_pebble`, offering no renewal
    information) was rate limited, so the second (`acme_front`, which offers it) issued. The
    first is back; the window of the certificate is still read from the second."""
    first = AcmeFront(second_pebble.directory.removesuffix("/dir"), *_pebble_tls).start()
    try:
        settings.DOMAINS_ACME_DIRECTORIES = [first.directory, acme_front.directory]
        first.rate_limited = 3600
        now = datetime.now(UTC)
        acme_front.window = (now + timedelta(days=10), now + timedelta(days=11))
        certificate = certificates.certificate_issue(domain_id=verified.pk)
        assert certificate is not None and certificate.ca_directory == acme_front.directory
        first.rate_limited = None
        acme_front.window = (now - timedelta(hours=1), now)  # moved earlier: it will revoke

        assert certificates.renewal_windows_refresh() == 1

        certificate.refresh_from_db()
        assert certificate.renew_after <= now
        assert len(acme_front.renewal_asked) == 2  # at issuance, and now
    finally:
        first.stop()


# The key id and HMAC key (base64url) the binding CA gave the platform's operator.
BINDING = ("petstore-platform", "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W")


@pytest.fixture
def binding_ca(pebble, acme_http_port, dns_server, tmp_path, _pebble_tls):
    """A Pebble that registers only accounts bound to BINDING (as ZeroSSL does)."""
    folder = tmp_path / "binding-pebble"
    folder.mkdir()
    bindings = dict([BINDING])
    with running_pebble(acme_http_port, dns_server.address, folder, _pebble_tls, bindings) as ca:
        yield ca


def test_a_ca_that_binds_accounts_issues_to_the_account_bound_with_its_own_credentials(
    verified, acme_front, binding_ca, settings
):
    acme_front.stop()
    settings.DOMAINS_ACME_DIRECTORIES = [acme_front.directory, binding_ca.directory]
    settings.DOMAINS_ACME_EAB = ["-", ":".join(BINDING)]

    certificate = certificates.certificate_issue(domain_id=verified.pk)

    assert certificate is not None and certificate.ca_directory == binding_ca.directory
    assert binding_ca.issued() == [certificate.serial]
