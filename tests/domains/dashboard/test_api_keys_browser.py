"""Settings → API keys in Chromium: a key made is shown once; reloading that page makes no
second key; Revoke asks first, then the key stops working."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from petstore.apikeys.models import ApiKey
from tests.fixtures.accessibility import assert_accessible
from tests.fixtures.browser import sign_in
from tests.fixtures.people import PASSWORD
from tests.pets.helpers import bearer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY = re.compile(r"pst_[0-9a-f]{8}_[0-9A-Za-z]{49}")


def test_a_key_is_made_shown_once_not_made_again_on_reload_and_revoked(page, live_dashboard, shop):
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/")
    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("ci")
    page.get_by_label("Project").select_option(value=str(shop.pk))
    page.get_by_label("Add, verify and remove domains").check()
    page.get_by_label("Expires in (days)").fill("30")
    page.get_by_role("button", name="Make key").click()

    plaintext = page.locator("#api-key-secret").inner_text().strip()
    assert_accessible(page)
    assert KEY.fullmatch(plaintext)
    key = ApiKey.objects.get()
    assert "domains:write" in key.scopes and key.name == "ci"

    # A reload sends the form again (Chromium confirms a resubmission by itself here): no
    # second key, and the first is not shown again.
    page.reload()
    expect(page.locator("#api-key-resent")).to_be_visible()
    assert_accessible(page)
    assert not KEY.search(page.content())
    assert ApiKey.objects.count() == 1

    client = APIClient()
    client.credentials(**bearer(plaintext))
    assert client.get("/v1/projects/shop/domains").status_code == 200

    page.goto(live_dashboard.url + "/dashboard/settings/api-keys/")
    page.locator("#api-keys").get_by_role("link", name="Revoke").click()
    assert_accessible(page)
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("revoked: it works no more")).to_be_visible()
    assert_accessible(page)
    assert client.get("/v1/projects/shop/domains").status_code == 401
