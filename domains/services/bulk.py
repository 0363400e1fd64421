"""Rows written one at a time, or collected and inserted with one INSERT at the end.

A sweep's batch records up to a hundred checks in one transaction; each records its
Activity lines and proofs through the same function as a single check does. Inside
`in_bulk()` those rows are collected instead of saved, then go in with one bulk INSERT
(in the order they were recorded); on an exception nothing is inserted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

from django.db import models

M = TypeVar("M", bound=models.Model)


class BulkInsert(Generic[M]):
    """The rows of one model that a writer saves through `save()`."""

    def __init__(self, manager: models.Manager[M], name: str) -> None:
        self.manager = manager
        # While in_bulk() is active, save() collects instead of inserting.
        self.collected: ContextVar[list[M] | None] = ContextVar(name, default=None)

    def save(self, row: M) -> None:
        collected = self.collected.get()
        if collected is None:
            row.save()
        else:
            collected.append(row)

    @contextmanager
    def in_bulk(self) -> Iterator[list[M]]:
        collected: list[M] = []
        token = self.collected.set(collected)
        try:
            yield collected
        finally:
            self.collected.reset(token)
        if collected:
            self.manager.bulk_create(collected)
