"""Host names: apex or subdomain, and the label of the record, come from the public suffix list."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from domains.dns import hostnames


@pytest.mark.parametrize(
    ("name", "apex", "label"),
    [
        ("shop.example.co.uk", False, "shop"),
        ("example.co.uk", True, "@"),
        ("a.b.example.com", False, "a.b"),
        ("example.com", True, "@"),
        ("alice.github.io", True, "@"),
    ],
)
def test_apex_or_subdomain_comes_from_the_public_suffix_list(name, apex, label):
    assert hostnames.is_apex(name) is apex
    assert hostnames.subdomain_label(name) == label


@pytest.mark.parametrize(
    ("name", "compared_as"),
    [
        ("Shop.Example.COM", "shop.example.com"),
        (" shop.example.com. ", "shop.example.com"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
    ],
)
def test_a_name_that_is_only_matched_is_folded_never_refused(name, compared_as):
    assert hostnames.comparable(name) == compared_as


def test_typed_input_may_end_in_one_dot_not_two():
    assert hostnames.normalize_hostname(" Shop.Example.com. ") == "shop.example.com"
    with pytest.raises(ValidationError):
        hostnames.normalize_hostname("shop.example.com..")


def test_the_platforms_own_hosts_are_read_from_the_settings_when_asked(settings):
    settings.PLATFORM_DOMAIN = "Pets.Example."
    settings.PLATFORM_CNAME_TARGET = "edge.pets.example"
    settings.DASHBOARD_HOST = "dash.pets.example"
    settings.API_BASE_URL = "https://API.pets.example/v1"
    settings.DOMAINS_CA_IDENTIFIER = "ca.pets.example"
    settings.ALLOWED_HOSTS = ["*", ".pets.example", "10.0.0.1"]
    own = hostnames.platform_hosts()
    assert own == hostnames.PlatformHosts(
        site="pets.example",
        cname_target="edge.pets.example",
        dashboard="dash.pets.example",
        api="api.pets.example",
        ca="ca.pets.example",
        allowed=(".pets.example", "10.0.0.1"),
    )
    # The names no project may claim are made of them: every one, but addresses.
    assert hostnames.platform_hostnames() == {
        "pets.example", "edge.pets.example", "dash.pets.example", "api.pets.example",
        "ca.pets.example",
    }  # fmt: skip
    assert hostnames.platform_registrable_domains() == {"pets.example"}
    settings.DASHBOARD_HOST = "console.other.example"
    assert hostnames.platform_hosts().dashboard == "console.other.example"
    assert "other.example" in hostnames.platform_registrable_domains()
