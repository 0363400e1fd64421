"""CAA (RFC 8659): the nearest CAA set, climbing from the name to its parents, decides."""

from __future__ import annotations

import pytest

from domains.choices import CertState, State
from domains.dns import caa
from domains.models import Certificate
from domains.services import certificates
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import CA_ID, TARGET, check

pytestmark = pytest.mark.django_db


def test_no_caa_records_allow_any_ca(dns_server):
    dns_server.add("shop.example.test", "CNAME", "elsewhere.example.test.")
    assert caa.caa("shop.example.test", [CA_ID])[0].code == "ok"


def test_caa_naming_the_platform_ca_allows(dns_server):
    dns_server.add("shop.example.test", "CAA", f'0 issue "{CA_ID}"', '0 issue "letsencrypt.org"')
    assert caa.caa("shop.example.test", [CA_ID])[0].code == "ok"


def test_caa_naming_another_ca_blocks_and_says_which_record(dns_server):
    dns_server.add("shop.example.test", "CAA", '0 issue "letsencrypt.org"')
    result = caa.caa("shop.example.test", [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert 'shop.example.test CAA 0 issue "letsencrypt.org"' in result.message
    assert CA_ID in result.message


def test_caa_on_a_parent_is_inherited(dns_server):
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    dns_server.add("www.shop.example.test", "A", "192.0.2.1")
    result = caa.caa("www.shop.example.test", [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert "example.test CAA" in result.found


def test_nearest_caa_set_wins_over_the_parent(dns_server):
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    dns_server.add("shop.example.test", "CAA", f'0 issue "{CA_ID}; account=42"')
    assert caa.caa("shop.example.test", [CA_ID])[0].code == "ok"


def test_empty_issue_value_forbids_every_ca(dns_server):
    dns_server.add("example.test", "CAA", '0 issue ";"')
    assert caa.caa("example.test", [CA_ID])[0].code == "caa_blocked"


def test_only_iodef_sets_no_issue_rule(dns_server):
    dns_server.add("example.test", "CAA", '0 iodef "mailto:security@example.test"')
    assert caa.caa("example.test", [CA_ID])[0].code == "ok"


def test_unknown_critical_property_blocks(dns_server):
    dns_server.add("example.test", "CAA", '128 tbs "x"', f'0 issue "{CA_ID}"')
    result = caa.caa("example.test", [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert "unknown critical" in result.message


def test_caa_lookup_timeout_is_temporary_not_permission(dns_server):
    dns_server.blackhole("example.test")
    result = caa.caa("shop.example.test", [CA_ID])[0]
    assert result.code == "dns_timeout"
    assert result.temporary


def test_the_identity_looked_for_is_the_one_the_issuing_authority_gives(dns_server):
    dns_server.add("shop.example.test", "CAA", '0 issue "letsencrypt.org"')
    assert caa.caa("shop.example.test", ["letsencrypt.org"])[0].code == "ok"
    blocked = caa.caa("shop.example.test", [CA_ID])[0]
    assert blocked.code == "caa_blocked"
    assert "letsencrypt.org" in blocked.message and CA_ID in blocked.message


def test_the_answer_says_which_of_several_authorities_the_records_allow(dns_server):
    dns_server.add("shop.example.test", "CAA", '0 issue "Sectigo.com"', '0 issue "pki.goog"')
    result, allowed = caa.caa("shop.example.test", ["letsencrypt.org", "sectigo.com"])
    assert result.code == "ok" and allowed == {"sectigo.com"}
    result, allowed = caa.caa("shop.example.test", ["letsencrypt.org", "ca.example"])
    assert result.code == "caa_blocked" and allowed == set()
    assert 'CAA 0 issue "letsencrypt.org"' in result.message  # the first one, to add
    dns_server.add("example.test", "CAA", '0 iodef "mailto:ops@example.test"')
    assert caa.caa("example.test", ["letsencrypt.org", "ca.example"])[1] == {
        "letsencrypt.org",
        "ca.example",
    }


# Twelve labels: ten below the registrable domain example.test.
DEEP = ".".join(f"l{i}" for i in range(10)) + ".example.test"


def test_a_deep_name_still_reads_its_registrable_domains_caa(dns_server):
    assert len(DEEP.split(".")) == 12
    dns_server.add("example.test", "CAA", '0 issue "otherca.example"')
    result = caa.caa(DEEP, [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert 'example.test CAA 0 issue "otherca.example"' in result.message


def test_a_deep_names_certificate_is_blocked_by_its_registrable_domains_caa(
    dns_server, shop, alice
):
    dns_server.add(DEEP, "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "otherca.example"')
    domain = domain_add(project=shop, hostname=DEEP, actor=alice)
    assert check(domain).state == State.ISSUING

    assert certificates.certificate_issue(domain_id=domain.pk) is None

    domain.refresh_from_db()
    assert domain.cert_state == CertState.BLOCKED
    assert domain.cert_code == "caa_blocked"
    assert not Certificate.objects.exists()


def test_only_the_names_between_are_capped(dns_server):
    deeper = ".".join(f"l{i}" for i in range(30)) + ".example.test"
    dns_server.queries.clear()
    assert caa.caa(deeper, [CA_ID])[0].code == "ok"
    asked = {name.rstrip(".") for name, rdtype in dns_server.queries if rdtype == "CAA"}
    nearest = {".".join(deeper.split(".")[i:]) for i in range(10)}
    assert asked == nearest | {"example.test", "test"}


def test_a_wildcard_reads_the_caa_of_the_name_it_stands_under(dns_server):
    dns_server.add("shop.example.test", "CAA", '0 issue "letsencrypt.org"')
    result = caa.caa("*.shop.example.test", [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert 'shop.example.test CAA 0 issue "letsencrypt.org"' in result.message


def test_a_wildcards_issuewild_decides_in_place_of_issue(dns_server):
    """RFC 8659 §4.3: a CA may issue for names (issue) and not for a wildcard (issuewild)."""
    dns_server.add(
        "shop.example.test", "CAA", f'0 issue "{CA_ID}"', '0 issuewild "letsencrypt.org"'
    )
    assert caa.caa("shop.example.test", [CA_ID])[0].code == "ok"
    result = caa.caa("*.shop.example.test", [CA_ID])[0]
    assert result.code == "caa_blocked"
    assert result.expected == f'CAA 0 issuewild "{CA_ID}" (or no CAA records)'
    assert f'CAA 0 issuewild "{CA_ID}"' in result.message


def test_a_wildcard_without_issuewild_follows_issue_and_issuewild_may_allow_only_it(
    dns_server,
):
    dns_server.add("shop.example.test", "CAA", f'0 issue "{CA_ID}"')
    assert caa.caa("*.shop.example.test", [CA_ID])[0].code == "ok"
    dns_server.remove("shop.example.test")
    dns_server.add("shop.example.test", "CAA", '0 issue ";"', f'0 issuewild "{CA_ID}"')
    assert caa.caa("*.shop.example.test", [CA_ID])[0].code == "ok"
    assert caa.caa("www.shop.example.test", [CA_ID])[0].code == "caa_blocked"
