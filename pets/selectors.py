"""Reads of the pets app that views reuse.

listPets serves one of a few fixed statements: with or without a status, with
or without a cursor, and a page size of 2 to 101 rows. Django compiles a
queryset to SQL on every evaluation, and with the queryset's cloning and the
filter's lookups that was ~150 µs of a ~450 µs list request in the profile,
more than running the statement. So the ORM writes each statement once per
process (`_page_statement`) and requests run it with their own parameters:
the same SQL, from the same model definition, without the per-request compile.
"""

from __future__ import annotations

import functools

from django.db import connection

from pets.models import Pet

# The columns listPets reads, in the order `pets.api.serializers.pets_from_rows` expects.
PET_COLUMNS = ("id", "name", "category_id", "status")


@functools.cache  # at most 2 x 2 x 100 shapes
def _page_statement(vendor: str, *, with_status: bool, with_after: bool, size: int) -> str:
    queryset = Pet.objects.values_list(*PET_COLUMNS)
    # Placeholder values: only the statement is kept. The parameters come in this
    # order (status, then id), as `pet_page` passes them.
    if with_status:
        queryset = queryset.filter(status="")
    if with_after:
        queryset = queryset.filter(id__gt=0)
    sql, _ = queryset.order_by("id")[:size].query.sql_with_params()
    return sql


def pet_page(*, status: str | None, after: int | None, size: int) -> list[tuple]:
    """Up to `size` pets as PET_COLUMNS tuples in id order: ids above `after` (if
    given), with this status (if given)."""
    statement = _page_statement(
        connection.vendor, with_status=status is not None, with_after=after is not None, size=size
    )
    params = [value for value in (status, after) if value is not None]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()
