"""Host names: apex or subdomain, and the label of the record, come from the public suffix list."""

from __future__ import annotations

import pytest

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
