"""The settings pages as Chromium lays them out."""

from __future__ import annotations

import pytest

from tests.fixtures.accessibility import assert_accessible
from tests.fixtures.browser import sign_in
from tests.fixtures.people import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each checkbox of the page with its label's box: [{box: {top, bottom, left, right}, label}].
CHECKBOXES_AND_LABELS = """() => [...document.querySelectorAll("input[type=checkbox]")].map(
  (box) => {
    const place = (element) => {
        const r = element.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
    };
    return {box: place(box), label: place(document.querySelector(`label[for="${box.id}"]`))};
  })"""


def test_each_notification_checkbox_sits_on_its_labels_line(page, live_dashboard, shop):
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/settings/notifications/")
    assert_accessible(page)
    placed = page.evaluate(CHECKBOXES_AND_LABELS)
    # The mail choices and the new webhook endpoint's events: every event type, twice.
    assert len(placed) >= 2 * 9
    for each in placed:
        box, label = each["box"], each["label"]
        middle = (box["top"] + box["bottom"]) / 2
        assert label["top"] <= middle <= label["bottom"], each  # on the label's line
        assert box["right"] <= label["left"], each  # the box first, then its words
