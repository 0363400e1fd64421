"""The one FilterSet of the pets list, used by DRF through django-filter's backend."""

from __future__ import annotations

import django_filters
from django import forms

from pets.models import PET_STATUS_INVALID, Pet, PetStatus


class PetFilterForm(forms.Form):
    def clean_status(self):
        # django-filter treats `?status=` as "no filter"; the API calls it an error.
        if "status" in self.data and self.cleaned_data.get("status") in ("", None):
            raise forms.ValidationError(PET_STATUS_INVALID)
        return self.cleaned_data.get("status")


class PetFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        choices=PetStatus.choices,
        help_text="Only pets with this availability status.",
        error_messages={"invalid_choice": PET_STATUS_INVALID},
    )

    class Meta:
        model = Pet
        fields = ["status"]
        form = PetFilterForm
