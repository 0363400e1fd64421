"""The one FilterSet of the pets list, and the backend that validates (and documents) it.

Stock django-filter builds a FilterSet (deep-copying its filters), a new Form
class and a form for every request, even one without any filter parameter:
~130 µs, a quarter of a filtered list request's CPU in the profile. So:
- without any of the FilterSet's parameters there is nothing to validate;
- a FilterSet whose validation reads nothing but the parameters
  (`validation_is_pure`, like PetFilter: a choice filter) is validated once
  per distinct set of parameter values;
- the view reads the validated values (`cleaned_data`) and hands them to a
  selector (listPets: pets.selectors.pet_page); no queryset is filtered.
"""

from __future__ import annotations

import functools

import django_filters
from django import forms
from django_filters import utils
from django_filters.rest_framework import DjangoFilterBackend

from pets.models import Pet, PetStatus


class PetFilterForm(forms.Form):
    def clean_status(self):
        # django-filter treats `?status=` as "no filter"; the API calls it an error.
        if "status" in self.data and self.cleaned_data.get("status") in ("", None):
            raise forms.ValidationError("Must be one of: available, pending, sold.")
        return self.cleaned_data.get("status")


class PetFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        choices=PetStatus.choices,
        help_text="Only pets with this availability status.",
        error_messages={"invalid_choice": "Must be one of: available, pending, sold."},
    )

    # Valid or not depends on the parameters alone (no model choices, no database).
    validation_is_pure = True

    class Meta:
        model = Pet
        fields = ["status"]
        form = PetFilterForm


class FilterBackend(DjangoFilterBackend):
    def cleaned_data(self, request, queryset, view) -> dict:
        """The filter parameters present in the request, validated (a 400 if not)."""
        filterset = self._validated(request, queryset, view)
        if filterset is None:
            return {}
        cleaned = filterset.form.cleaned_data
        return {name: value for name, value in cleaned.items() if name in request.GET}

    def _validated(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None:
            return None
        params = request.GET  # DRF's query_params, and what a Django request has too
        values = tuple(
            (name, params[name]) for name in filterset_class.base_filters if name in params
        )
        if not values:
            return None  # no filter parameter: nothing to validate or apply
        if getattr(filterset_class, "validation_is_pure", False):
            filterset = _validated(filterset_class, values)
        else:
            filterset = self.get_filterset(request, queryset, view)
        if not filterset.is_valid():
            raise utils.translate_validation(filterset.errors)
        return filterset


@functools.lru_cache(maxsize=256)
def _validated(filterset_class, values: tuple[tuple[str, str], ...]):
    """A FilterSet validated against these parameter values (the last of each, as a
    form reads a QueryDict). Only read afterwards: shared by requests and threads."""
    filterset = filterset_class(dict(values), queryset=filterset_class._meta.model.objects.none())
    filterset.is_valid()
    return filterset
