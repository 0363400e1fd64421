"""The summary above the doctor's rows is derived from them: "every name server gives what
the platform needs" only above rows that are all a ✓, whatever findings were stored."""

from __future__ import annotations

from django.template.loader import render_to_string

from domains.models import Domain
from domains.templatetags.dashboard import doctor_panel

ALL_IS_WELL = "Every name server of the zone gives what the platform needs."


def _panel(*agrees: bool) -> str:
    diagnosis = {
        "checked_at": "2026-11-02T12:00:00+00:00",
        "findings": [],
        "nameservers": [
            {"name": f"ns{n}.example.test", "address": f"192.0.2.{n}", "ttl": 300,
             "answer": "CNAME domains.petstore.localhost." if ok else "no record", "agrees": ok}
            for n, ok in enumerate(agrees, start=1)
        ],
    }  # fmt: skip
    domain = Domain(hostname="www.example.test", check_diagnosis=diagnosis)
    return render_to_string("domains/_doctor.html", doctor_panel(domain))


def test_the_only_server_giving_no_record_is_never_summed_up_as_all_is_well():
    shown = _panel(False)
    assert ALL_IS_WELL not in shown
    assert "Not every name server of the zone gives what the platform needs" in shown
    assert "callout-fail" in shown and "✗" in shown


def test_one_wrong_server_among_right_ones_is_not_all_is_well_either():
    assert ALL_IS_WELL not in _panel(True, False)


def test_servers_that_all_agree_are_summed_up_as_all_is_well():
    shown = _panel(True, True)
    assert ALL_IS_WELL in shown
    assert "callout-fail" not in shown
