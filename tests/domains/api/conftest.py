"""alice's `shop` with two live domains and a redirect between them: something behind
every URL of the domains API."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from domains.models import Redirect
from domains.services.custom_domains import domain_add
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live
from tests.pets.helpers import bearer


@pytest.fixture
def furnished(shop, www, alice) -> Redirect:
    """shop: www.example.test and old.example.test live, old redirecting to www."""
    go_live(www)
    old = go_live(domain_add(project=shop, hostname="old.example.test", actor=alice))
    return redirect_save(project=shop, from_domain=old, to_domain=www, actor=alice)


@pytest.fixture
def bob_api(bob_key):
    client = APIClient()
    client.credentials(**bearer(bob_key.plaintext))
    return client
