"""The development DNS server's zone files, read by dnspython's own zone parser."""

from __future__ import annotations

import dns.exception
import dns.rdatatype
import pytest

from devtools.zonefiles import DEFAULT_TTL, read_zone_file


def _records(text: str, origin: str = "example.test") -> dict[tuple[str, str], list[str]]:
    return {
        (rrset.name.to_text(), dns.rdatatype.to_text(rrset.rdtype)): sorted(
            rdata.to_text() for rdata in rrset
        )
        for rrset in read_zone_file(text, origin)
    }


def test_a_dmarc_txt_record_keeps_its_semicolons_and_the_rest_of_the_zone():
    records = _records(
        '_dmarc  IN TXT "v=DMARC1; p=none; rua=mailto:dmarc@example.test"\n'
        "www     IN A   192.0.2.10\n"
    )
    assert records[("_dmarc.example.test.", "TXT")] == [
        '"v=DMARC1; p=none; rua=mailto:dmarc@example.test"'
    ]
    assert records[("www.example.test.", "A")] == ["192.0.2.10"]


def test_a_caa_record_with_parameters_is_read_whole():
    records = _records('@ IN CAA 0 issue "ca.example.net; validationmethods=dns-01"\n')
    assert records[("example.test.", "CAA")] == [
        '0 issue "ca.example.net; validationmethods=dns-01"'
    ]


def test_a_parenthesised_soa_with_comments_spans_lines():
    records = _records(
        "@ IN SOA ns1 hostmaster (\n"
        "        2026010101 ; serial\n"
        "        3600       ; refresh\n"
        "        600 86400 60 )\n"
        "www A 192.0.2.1\n"
    )
    assert records[("example.test.", "SOA")] == [
        "ns1.example.test. hostmaster.example.test. 2026010101 3600 600 86400 60"
    ]
    assert ("www.example.test.", "A") in records


def test_origin_and_ttl_directives_apply_to_the_records_after_them():
    rrsets = read_zone_file(
        "before A 192.0.2.1\n"
        "$TTL 1h\n"
        "$ORIGIN shop.example.test.\n"
        "www A 192.0.2.2\n"
        "    AAAA 2001:db8::2\n",  # no owner: the previous one again
        "example.test",
    )
    found = {(r.name.to_text(), dns.rdatatype.to_text(r.rdtype)): r.ttl for r in rrsets}
    assert found == {
        ("before.example.test.", "A"): DEFAULT_TTL,
        ("www.shop.example.test.", "A"): 3600,
        ("www.shop.example.test.", "AAAA"): 3600,
    }


def test_a_cname_beside_an_a_record_is_kept_as_the_owner_wrote_it():
    records = _records("www CNAME domains.petstore.localhost.\nwww A 192.0.2.1\n")
    assert records[("www.example.test.", "CNAME")] == ["domains.petstore.localhost."]
    assert records[("www.example.test.", "A")] == ["192.0.2.1"]


def test_names_in_values_are_made_absolute():
    records = _records("@ MX 10 mail\nwww CNAME shop\n")
    assert records[("example.test.", "MX")] == ["10 mail.example.test."]
    assert records[("www.example.test.", "CNAME")] == ["shop.example.test."]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("@ A 192.0.2.1\n\nwww A not-an-address\n@ A 192.0.2.2\n", 3, "malformed"),
        ("@ A 192.0.2.1\n@ SOA ns1 hm (\n 1 2 3\n 4 5 )\nwww BOGUS x\n", 5, "BOGUS"),
        ('@ A 192.0.2.1\n_dmarc TXT "v=DMARC1; p=none\n', 2, "quoted string"),
        ("$INCLUDE /etc/passwd\n", 1, "$INCLUDE"),
    ],
)
def test_a_syntax_error_names_the_file_and_its_line(text, line, what):
    with pytest.raises(dns.exception.SyntaxError) as error:
        read_zone_file(text, "example.test")
    assert str(error.value).startswith(f"example.test.zone:{line}: ")
    assert what in str(error.value)
