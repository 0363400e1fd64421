"""A write asked again across a dropped connection (petstore/database/outages.py), on the real
PostgreSQL: the connection is ended by the server (pg_terminate_backend, as a restart ends
it), and the write is stored once on a new one; in a transaction, or past its time, the
error goes up."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection, transaction

from pets.models import Category
from petstore.database import outages
from tests.database.drops import drop_this_connection


def _writes_after_the_drop(name: str, attempts: list[int]):
    def write() -> Category:
        attempts.append(1)
        if len(attempts) == 1:
            connection.ensure_connection()
            drop_this_connection()
        return Category.objects.create(name=name)

    return write


def test_a_write_whose_connection_was_dropped_is_stored_once_on_a_new_one(transactional_db):
    attempts: list[int] = []
    stored = outages.outlasting_outages(_writes_after_the_drop("Dogs", attempts), within=10)
    assert len(attempts) == 2
    assert list(Category.objects.values_list("pk", "name")) == [(stored.pk, "Dogs")]


def test_past_its_time_the_error_goes_up(transactional_db):
    attempts: list[int] = []
    with pytest.raises(OperationalError):
        outages.outlasting_outages(_writes_after_the_drop("Dogs", attempts), within=0)
    assert len(attempts) == 1
    connection.close()
    assert not Category.objects.exists()


def test_in_a_transaction_the_error_goes_up_at_once(transactional_db):
    attempts: list[int] = []
    with pytest.raises(OperationalError), transaction.atomic():
        outages.outlasting_outages(_writes_after_the_drop("Dogs", attempts), within=10)
    assert len(attempts) == 1
    connection.close()
    assert not Category.objects.exists()
