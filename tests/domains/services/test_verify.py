"""Verification against a real DNS server on loopback: one case per thing an owner can get wrong."""

from __future__ import annotations

import pytest

from domains.choices import State
from domains.selectors import domain_troubleshoot
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.verification import domain_check
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check

pytestmark = pytest.mark.django_db


@pytest.fixture
def apex(shop, alice):
    return domain_add(project=shop, hostname="example.test", actor=alice)


def test_correct_cname_verifies(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == "ok"
    assert domain.state == State.ISSUING  # verified, and the certificate is requested
    assert domain.verified_at is not None
    assert domain.check_expected == f"CNAME {TARGET}"
    assert domain.check_found == f"CNAME {TARGET}"


def test_cname_comparison_ignores_case_and_trailing_dot(dns_server, www):
    dns_server.add("www.example.test", "CNAME", "DOMAINS.Petstore.LOCALHOST.")
    assert check(www).check_code == "ok"


def test_cname_pointing_elsewhere_says_where(dns_server, www):
    dns_server.add("www.example.test", "CNAME", "shops.other-host.example.")
    domain = check(www)
    assert domain.check_code == "wrong_target"
    assert domain.state == State.PENDING
    assert domain.check_found == "CNAME shops.other-host.example"
    assert "shops.other-host.example" in domain.check_message
    assert TARGET in domain.check_message


def test_conflicting_a_record_fails_verification(dns_server, www):
    dns_server.add("www.example.test", "A", "203.0.113.7")
    domain = check(www)
    assert domain.check_code == "conflicting_record"
    assert domain.check_found == "A 203.0.113.7"
    assert "A 203.0.113.7" in domain.check_message
    assert domain.state == State.PENDING


def test_a_record_beside_the_right_cname_is_named(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("www.example.test", "AAAA", "2001:db8::dead")
    domain = check(www)
    assert domain.check_code == "conflicting_record"
    assert "AAAA 2001:db8::dead" in domain.check_message
    assert domain.check_found == f"CNAME {TARGET}; AAAA 2001:db8::dead"


def test_name_without_any_record_is_nxdomain(dns_server, www):
    dns_server.add("example.test", "TXT", '"zone exists"')
    domain = check(www)
    assert domain.check_code == "nxdomain"
    assert "does not exist" in domain.check_message
    assert domain.check_found == ""


def test_name_with_other_records_but_no_cname_is_no_record(dns_server, www):
    dns_server.add("www.example.test", "TXT", '"hello"')
    domain = check(www)
    assert domain.check_code == "no_record"
    assert "no CNAME record yet" in domain.check_message


def test_record_that_appears_after_two_checks_verifies_on_the_third(dns_server, www):
    assert check(www).check_code == "nxdomain"
    assert check(www).check_code == "nxdomain"
    www.refresh_from_db()
    assert www.check_attempts == 2
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == "ok"
    assert domain.check_attempts == 0


def test_server_that_never_answers_is_a_temporary_timeout(dns_server, www):
    dns_server.blackhole("www.example.test")
    domain = check(www)
    assert domain.check_code == "dns_timeout"
    assert "temporary" in domain.check_message
    assert "not your configuration" in domain.check_message
    assert domain.state == State.PENDING


def test_servfail_is_temporary_and_kept_apart_from_timeout(dns_server, www):
    dns_server.servfail("www.example.test")
    domain = check(www)
    assert domain.check_code == "dns_servfail"
    assert domain.state == State.PENDING


def test_apex_verifies_when_its_addresses_are_the_targets(dns_server, apex):
    dns_server.add("example.test", "A", TARGET_ADDRESS)
    dns_server.add("example.test", "AAAA", TARGET_ADDRESS6)
    domain = check(apex)
    assert domain.check_code == "ok"
    assert TARGET_ADDRESS in domain.check_expected


def test_apex_pointing_elsewhere_does_not_verify(dns_server, apex):
    dns_server.add("example.test", "A", "198.51.100.9")
    domain = check(apex)
    assert domain.check_code == "wrong_target"
    assert domain.check_found == "A 198.51.100.9"
    assert "ALIAS or ANAME" in domain.check_message


def test_apex_with_an_extra_address_names_the_conflict(dns_server, apex):
    dns_server.add("example.test", "A", TARGET_ADDRESS, "198.51.100.9")
    dns_server.add("example.test", "AAAA", TARGET_ADDRESS6)
    domain = check(apex)
    assert domain.check_code == "conflicting_record"
    assert "198.51.100.9" in domain.check_message


def test_apex_without_addresses_is_no_record(dns_server, apex):
    assert check(apex).check_code == "nxdomain"  # nothing at all is known of example.test
    dns_server.add("example.test", "MX", "10 mail.example.test.")
    assert check(apex).check_code == "no_record"


def test_idna_name_is_checked_in_its_ascii_form(dns_server, shop, alice):
    domain = domain_add(project=shop, hostname="Bücher.example.test", actor=alice)
    assert domain.hostname == "xn--bcher-kva.example.test"
    assert domain.hostname_unicode == "bücher.example.test"
    dns_server.add("xn--bcher-kva.example.test", "CNAME", TARGET + ".")
    assert check(domain).check_code == "ok"


def test_check_of_a_removed_domain_does_nothing(dns_server, www, alice):
    pk = www.pk
    domain_remove(domain=www, actor=alice)
    assert domain_check(domain_id=pk).domain is None


def test_troubleshoot_reports_both_checks_from_what_they_stored(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    domain_check(domain_id=www.pk)
    certificates.certificate_issue(domain_id=www.pk)  # meets the CAA record
    www.refresh_from_db()
    dns_server.clear()  # what the DNS says now is not asked: a report reads stored results
    report = domain_troubleshoot(domain=www)
    assert report["verifies"] is True
    assert report["caa_blocks"] is True
    assert "letsencrypt.org" in report["caa_message"]
