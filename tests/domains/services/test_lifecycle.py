"""The state machine: the whole transition table, conditional updates that lose safely, and
a certificate state the database keeps in step with the state."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from domains.choices import CERT_STATES, CertState, State
from domains.models import Domain
from domains.services import lifecycle as states
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import in_step

ALL = list(State)

# The table as the decisions document writes it: target <- allowed sources.
EXPECTED = {
    State.VERIFIED: {State.PENDING, State.FAILED, State.ISSUING, State.MISCONFIGURED, State.LOST},
    State.ISSUING: {State.VERIFIED},
    State.ACTIVE: {State.ISSUING},
    # Only a claim that never went live fails; a live one stops serving after its grace
    # period (misconfigured) or loses the name to a TXT proof (lost).
    State.FAILED: {State.PENDING},
    State.MISCONFIGURED: {State.VERIFIED, State.ISSUING, State.ACTIVE},
    State.LOST: {State.VERIFIED, State.ISSUING, State.ACTIVE},
    State.PENDING: {State.FAILED, State.MISCONFIGURED, State.LOST},
}


@pytest.mark.parametrize("source", ALL)
@pytest.mark.parametrize("target", ALL)
def test_transition_table(source, target):
    assert states.can_transition(source, target) == (source in EXPECTED.get(target, set()))


@pytest.mark.django_db
@pytest.mark.parametrize("source", ALL)
@pytest.mark.parametrize("target", [State.VERIFIED, State.ISSUING, State.ACTIVE, State.FAILED])
def test_transition_applies_only_from_allowed_states(shop, alice, source, target):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=domain.pk).update(**in_step(source))
    domain.refresh_from_db()
    moved = states.transition(domain, target, cert_state=in_step(target)["cert_state"])
    domain.refresh_from_db()
    assert moved == (source in EXPECTED[target])
    assert domain.state == (target if moved else source)


@pytest.mark.django_db
def test_a_stale_copy_loses_the_race(shop, alice):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=domain.pk).update(**in_step(State.ISSUING))
    first, second = Domain.objects.get(pk=domain.pk), Domain.objects.get(pk=domain.pk)
    issued = {"cert_state": CertState.ISSUED}
    assert states.transition(first, State.ACTIVE, **issued) is True
    assert states.transition(second, State.ACTIVE, **issued) is False  # someone else was first
    assert second.state == State.ISSUING  # the loser's copy is left untouched


def test_there_is_no_transition_out_of_nowhere():
    with pytest.raises(states.TransitionNotAllowed):
        states.transition(Domain(state=State.PENDING), "bogus")


@pytest.mark.django_db
@pytest.mark.parametrize("source", ALL)
def test_a_move_through_two_states_is_one_update_allowed_by_the_first_step(
    shop, alice, source, django_assert_num_queries
):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    Domain.objects.filter(pk=domain.pk).update(**in_step(source))
    domain.refresh_from_db()
    with django_assert_num_queries(1):
        moved = states.transition(
            domain, State.VERIFIED, State.ISSUING, cert_state=CertState.REQUESTED
        )
    domain.refresh_from_db()
    assert moved == (source in EXPECTED[State.VERIFIED])
    assert domain.state == (State.ISSUING if moved else source)


@pytest.mark.django_db
def test_a_move_through_a_step_the_table_does_not_have_is_refused(shop, alice):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    with pytest.raises(states.TransitionNotAllowed):
        states.transition(domain, State.VERIFIED, State.ACTIVE)  # active needs issuing first
    domain.refresh_from_db()
    assert domain.state == State.PENDING


# Where a domain's certificate stands, by its state, as the services write it: a request
# moves it to issuing, the certificate to active, a block back to verified; a domain that
# stops being served keeps what it had.
EXPECTED_CERT_STATES = {
    State.VERIFIED: {CertState.NONE, CertState.BLOCKED},
    State.ISSUING: {CertState.REQUESTED},
    State.ACTIVE: {CertState.ISSUED},
    **{
        state: set(CertState)
        for state in (State.PENDING, State.FAILED, State.MISCONFIGURED, State.LOST)
    },
}


def test_the_certificate_state_table():
    assert CERT_STATES == EXPECTED_CERT_STATES


@pytest.mark.django_db
@pytest.mark.parametrize("cert_state", list(CertState))
@pytest.mark.parametrize("state", ALL)
def test_the_database_refuses_a_certificate_state_out_of_step(shop, alice, state, cert_state):
    """Every pair the table allows is kept; every other one (a verified domain with an
    issued certificate, an active one with none, ...) is refused by the database."""
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    row = Domain.objects.filter(pk=domain.pk)
    if cert_state in CERT_STATES[state]:
        row.update(state=state, cert_state=cert_state)
        assert row.values_list("state", "cert_state").get() == (state, cert_state)
        return
    with pytest.raises(IntegrityError), transaction.atomic():
        row.update(state=state, cert_state=cert_state)
    assert row.values_list("state", "cert_state").get() == (State.PENDING, CertState.NONE)
