"""The ACME CAs in order (domains/pki/cas.py): each reads its own value of a per-CA setting,
the one value for all, or none (`-`), whatever directories a test sets after start-up."""

from __future__ import annotations

from domains.pki.cas import configured


def test_each_ca_reads_its_own_value_of_a_per_ca_setting_or_the_one_for_all(settings):
    settings.DOMAINS_ACME_DIRECTORIES = ["https://a.example/dir", "https://b.example/dir"]
    settings.DOMAINS_ACME_CAA_IDENTITIES = ["-", "sectigo.com zerossl.com"]
    settings.DOMAINS_ACME_CA_BUNDLE = ["/etc/test-ca.pem"]
    settings.DOMAINS_ACME_EAB = ["-", "kid:hmac-key"]
    first, second = configured()
    assert first.caa_identities == (settings.DOMAINS_CA_IDENTIFIER,)
    assert second.caa_identities == ("sectigo.com", "zerossl.com")
    assert first.ca_bundle == second.ca_bundle == "/etc/test-ca.pem"
    assert (first.eab, second.eab) == (None, ("kid", "hmac-key"))
    assert (first.label, second.label) == ("a.example", "b.example")
