"""The hot path answers only for the serializer and the FilterSet it was written for,
judged by what they write and apply (fields, sources, classes, read/write-only, choices;
filters, lookups, exclusion), not by which classes they are: any other goes to DRF, whose
answer it then is, byte for byte (tests/pets/api/compare.py)."""

from __future__ import annotations

import json

import django_filters
import pytest
from rest_framework import serializers

from pets.api import hotpath
from pets.api.filters import PetFilter
from pets.api.serializers import PetSerializer
from pets.api.views import PetsView
from pets.models import PetStatus
from tests.pets.api.compare import assert_same

pytestmark = pytest.mark.django_db


class WithCreatedAt(PetSerializer):
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815 - the API's casing


class NameFromStatus(PetSerializer):
    name = serializers.CharField(source="status")


class WriteOnlyName(PetSerializer):
    name = serializers.CharField(write_only=True)


class StatusAsInteger(PetSerializer):
    status = serializers.ChoiceField(choices=[(1, "available"), (2, "pending"), (3, "sold")])


class UpperCaseNames(PetSerializer):
    def to_representation(self, instance):
        return {**super().to_representation(instance), "name": instance.name.upper()}


class SamePet(PetSerializer):
    """PetSerializer under another name: the same fields, the same output."""


class WithNameFilter(PetFilter):
    name = django_filters.CharFilter()


class StatusExcluded(PetFilter):
    status = django_filters.ChoiceFilter(choices=PetStatus.choices, exclude=True)


LIST_REQUESTS: list[tuple[str, dict]] = [
    ("/v1/pets?limit=3", {}),
    ("/v1/pets?status=sold&limit=2", {}),
]


@pytest.mark.parametrize(
    "serializer", [WithCreatedAt, NameFromStatus, WriteOnlyName, StatusAsInteger, UpperCaseNames]
)
def test_a_serializer_that_writes_otherwise_is_left_to_drf(
    settings, alice_key, pets, no_rate_limits, monkeypatch, caplog, serializer
):
    monkeypatch.setattr(PetsView, "serializer_class", serializer)
    hotpath._answers_for.cache_clear()  # this process's first look at this serializer
    answers = assert_same(settings, alice_key, LIST_REQUESTS, hot=False)
    assert [answer[0] for answer in answers] == [200, 200]
    declined = [r for r in caplog.records if r.name == hotpath.__name__ and "declines" in r.message]
    assert len(declined) == 1  # once for the process, not per request
    assert "serializer" in declined[0].message


def test_a_serializer_with_one_more_field_gets_drfs_answer_with_that_field(
    settings, alice_key, pets, no_rate_limits, monkeypatch
):
    monkeypatch.setattr(PetsView, "serializer_class", WithCreatedAt)
    (answer,) = assert_same(settings, alice_key, [("/v1/pets?limit=1", {})], hot=False)
    assert list(json.loads(answer[2])[0]) == ["id", "name", "categoryId", "status", "createdAt"]


def test_a_serializer_with_the_same_fields_keeps_the_hot_path(
    settings, alice_key, pets, no_rate_limits, monkeypatch
):
    monkeypatch.setattr(PetsView, "serializer_class", SamePet)
    assert_same(settings, alice_key, LIST_REQUESTS, hot=True)


@pytest.mark.parametrize("filterset", [WithNameFilter, StatusExcluded])
def test_a_filterset_that_filters_otherwise_is_left_to_drf(
    settings, alice_key, pets, no_rate_limits, monkeypatch, caplog, filterset
):
    monkeypatch.setattr(PetsView, "filterset_class", filterset)
    requests = [*LIST_REQUESTS, ("/v1/pets?name=P1", {})]
    assert_same(settings, alice_key, requests, hot=False)
    assert "filters" in caplog.text
