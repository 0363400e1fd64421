"""The project's `domains` structure: a primary domain and redirect entries {from, to, status}."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from domains.models import DomainEvent, Redirect
from domains.selectors import project_domains_structure
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.projects import project_set_primary
from domains.services.redirects import redirect_delete, redirect_save
from tests.fixtures.domains import go_live, run_at_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def names(shop, alice):
    """Three live domains of alice's project."""
    return {
        label: go_live(domain_add(project=shop, hostname=f"{label}.example.test", actor=alice))
        for label in ("www", "old", "legacy")
    }


def refused(code, **kwargs):
    with pytest.raises(ValidationError) as info:
        redirect_save(**kwargs)
    assert info.value.code == code
    return info.value.messages[0]


def test_structure_reads_as_the_spec_shape(shop, names, alice):
    project_set_primary(project=shop, domain=names["www"], actor=alice)
    redirect_save(project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice)
    redirect_save(
        project=shop, from_domain=names["legacy"], to_domain=names["www"], status=308, actor=alice
    )
    assert project_domains_structure(project=shop) == {
        "primary": "www.example.test",
        "redirects": [
            {"from": "legacy.example.test", "to": "www.example.test", "status": 308},
            {"from": "old.example.test", "to": "www.example.test", "status": 301},
        ],
    }


def test_empty_structure(shop):
    assert project_domains_structure(project=shop) == {"primary": None, "redirects": []}


def test_status_defaults_to_301_and_allows_302_307_308(shop, names, alice):
    redirect = redirect_save(
        project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice
    )
    assert redirect.status == 301
    for status in (302, 307, 308):
        redirect = redirect_save(
            project=shop, from_domain=names["old"], to_domain=names["www"], status=status,
            redirect=redirect, actor=alice,
        )  # fmt: skip
        assert Redirect.objects.get().status == status
    message = refused(
        "invalid_status", project=shop, from_domain=names["old"], to_domain=names["www"],
        status=303, redirect=redirect, actor=alice,
    )  # fmt: skip
    assert "301, 302, 307, 308" in message


def test_both_ends_must_belong_to_the_project(shop, bobs, names, alice, bob):
    theirs = domain_add(project=bobs, hostname="bob.example.test", actor=bob)
    refused("not_owned", project=shop, from_domain=names["old"], to_domain=theirs, actor=alice)
    refused("not_owned", project=shop, from_domain=theirs, to_domain=names["www"], actor=alice)


def test_a_domain_cannot_redirect_to_itself(shop, names, alice):
    refused(
        "redirect_loop", project=shop, from_domain=names["www"], to_domain=names["www"],
        actor=alice,
    )  # fmt: skip


def test_loops_through_other_redirects_are_refused(shop, names, alice):
    www, old, legacy = names["www"], names["old"], names["legacy"]
    redirect_save(project=shop, from_domain=old, to_domain=www, actor=alice)
    redirect_save(project=shop, from_domain=www, to_domain=legacy, actor=alice)
    message = refused("redirect_loop", project=shop, from_domain=legacy, to_domain=old, actor=alice)
    assert "loop" in message


def test_a_from_domain_has_one_redirect(shop, names, alice):
    redirect_save(project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice)
    refused(
        "duplicate_from", project=shop, from_domain=names["old"], to_domain=names["legacy"],
        actor=alice,
    )  # fmt: skip


def test_editing_a_redirect_keeps_one_entry(shop, names, alice):
    redirect = redirect_save(
        project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice
    )
    redirect_save(
        project=shop, from_domain=names["old"], to_domain=names["legacy"], redirect=redirect,
        actor=alice,
    )  # fmt: skip
    assert project_domains_structure(project=shop)["redirects"] == [
        {"from": "old.example.test", "to": "legacy.example.test", "status": 301}
    ]


def test_the_primary_cannot_redirect_away_and_a_redirecting_domain_cannot_be_primary(
    shop, names, alice
):
    project_set_primary(project=shop, domain=names["www"], actor=alice)
    refused(
        "primary_redirects", project=shop, from_domain=names["www"], to_domain=names["old"],
        actor=alice,
    )  # fmt: skip
    redirect_save(project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice)
    with pytest.raises(ValidationError) as info:
        project_set_primary(project=shop, domain=names["old"], actor=alice)
    assert info.value.code == "primary_redirects"


def test_primary_must_belong_to_the_project(shop, bobs, alice, bob):
    theirs = domain_add(project=bobs, hostname="bob.example.test", actor=bob)
    with pytest.raises(ValidationError) as info:
        project_set_primary(project=shop, domain=theirs, actor=alice)
    assert info.value.code == "not_owned"


def test_removing_a_domain_removes_its_redirects_and_clears_the_primary(shop, names, alice):
    project_set_primary(project=shop, domain=names["www"], actor=alice)
    redirect_save(project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice)
    domain_remove(domain=names["www"], actor=alice)
    shop.refresh_from_db()
    assert project_domains_structure(project=shop) == {"primary": None, "redirects": []}


def test_deleting_a_redirect_records_an_event(shop, names, alice):
    redirect = redirect_save(
        project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice
    )
    redirect_delete(redirect=redirect, actor=alice)
    assert not Redirect.objects.exists()
    assert DomainEvent.objects.filter(action="redirect_deleted", actor=alice).count() == 1


def test_a_redirect_may_only_point_at_a_live_domain(shop, names, alice):
    pending = domain_add(project=shop, hostname="new.example.test", actor=alice)
    message = refused(
        "target_not_live", project=shop, from_domain=names["old"], to_domain=pending, actor=alice
    )
    assert "new.example.test is not live yet" in message


def test_a_redirect_from_a_pending_domain_is_kept_and_waits_for_it(shop, names, alice):
    pending = domain_add(project=shop, hostname="new.example.test", actor=alice)
    redirect = redirect_save(project=shop, from_domain=pending, to_domain=names["www"], actor=alice)
    assert redirect.from_domain.is_live is False


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_for_one_source_make_one_redirect_and_refuse_the_rest(names, shop, alice):
    """Each save reads `from` as free before any commits; the one-to-one constraint
    decides, and the losers get the duplicate refusal, not an IntegrityError."""
    made, errors = run_at_once(
        lambda: redirect_save(
            project=shop, from_domain=names["old"], to_domain=names["www"], actor=alice
        ),
        20,
    )
    assert len(made) == 1
    assert len(errors) == 19
    assert {type(error) for error in errors} == {ValidationError}
    assert {getattr(error, "code", None) for error in errors} == {"duplicate_from"}
    assert Redirect.objects.filter(from_domain=names["old"]).count() == 1
