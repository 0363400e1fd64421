"""The sentences owners read that belong to a value (templates/domains/copy/): one for
every domain state and every owner event type, none left empty by a missing branch."""

from __future__ import annotations

import pytest

from domains.channels.email import next_step
from domains.choices import EventType, State
from domains.dashboard.presenters import state_help


@pytest.mark.parametrize("state", State.values)
def test_every_state_has_its_own_sentence_for_the_owner(state):
    sentences = {state_help(other) for other in State.values}
    assert state_help(state).endswith(".")
    assert "\n" not in state_help(state)
    assert len(sentences) == len(State.values)


@pytest.mark.parametrize("type", EventType.values)
def test_every_event_type_says_what_to_do_next(type):
    assert next_step(type).endswith(".")
    assert "\n" not in next_step(type)


def test_the_copy_is_word_for_word_what_owners_read():
    assert state_help(State.PENDING) == "Waiting for the DNS record. Create it, then choose Verify."
    assert next_step(EventType.CLAIM_LOST) == (
        "If the name is yours, add this project's TXT record, then choose Re-verify."
    )
    assert state_help("no such state") == ""
