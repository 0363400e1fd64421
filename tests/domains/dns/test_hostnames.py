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
