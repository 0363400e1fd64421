"""Input and output shapes. Input fields are strict: JSON types are not coerced."""

from __future__ import annotations

import re
import unicodedata

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from pets.models import NAME_MAX_LENGTH, PET_STATUS_INVALID, Category, PetStatus
from petstore.api.ids import INT64_MAX

# C0 and C1 control characters, DEL included: a tab, a newline or an ESC in a stored name would
# reach logs, terminals and CSV exports as layout or escape sequences.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def has_format_character(text: str) -> bool:
    """Unicode's format characters (category Cf): bidirectional overrides and isolates
    (U+202E shows "gpj.exe" as "exe.jpg"), zero-width spaces and joiners, the BOM. Invisible,
    they make two names that look the same differ, or reorder what is shown around them."""
    return any(unicodedata.category(character) == "Cf" for character in text)


class StrictCharField(serializers.CharField):
    """A JSON string only: numbers and booleans are refused, not turned into text. Control
    and format characters are refused anywhere in it, before surrounding whitespace is
    trimmed: a trailing newline is a control character too, not whitespace to drop."""

    default_error_messages = {
        "invalid": "Must be a string.",
        "encoding": "Must be valid Unicode text.",
        "control": "Must not contain control characters (U+0000-U+001F, U+007F-U+009F).",
        "format": (
            "Must not contain invisible format characters (Unicode category Cf: "
            "bidirectional controls, zero-width characters, U+FEFF)."
        ),
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            data.encode("utf-8")  # lone surrogates ("\ud800") cannot be stored
        except UnicodeEncodeError:
            self.fail("encoding")
        if CONTROL_CHARACTERS.search(data):
            self.fail("control")
        if has_format_character(data):
            self.fail("format")
        return super().to_internal_value(data)


@extend_schema_field({"type": "integer", "format": "int64", "minimum": 1, "maximum": INT64_MAX})
class CategoryIdField(serializers.PrimaryKeyRelatedField):
    """A JSON integer within int64 naming an existing category."""

    default_error_messages = {
        "incorrect_type": "Must be an integer.",
        "out_of_range": f"Must be between 1 and {INT64_MAX}.",
        "does_not_exist": "Unknown category {pk_value}.",
    }

    def to_internal_value(self, data):
        if type(data) is not int:  # bool is an int subclass; floats and strings are refused
            self.fail("incorrect_type", data_type=type(data).__name__)
        if not 1 <= data <= INT64_MAX:
            self.fail("out_of_range")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    default_error_messages = {"invalid_choice": PET_STATUS_INVALID}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class NewPetSerializer(serializers.Serializer):
    """createPet's request body. Unknown members are ignored."""

    name = StrictCharField(min_length=1, max_length=NAME_MAX_LENGTH)
    categoryId = CategoryIdField(queryset=Category.objects.all(), source="category")
    status = StrictChoiceField(
        choices=PetStatus.choices,
        default=PetStatus.AVAILABLE,
        help_text="Availability status; `available` when omitted.",
    )


@extend_schema_field(OpenApiTypes.INT64)
class Int64Field(serializers.IntegerField):
    pass


class PetSerializer(serializers.Serializer):
    """A pet as returned: exactly id, name, categoryId, status.

    listPets' hot path writes the same shape from rows (pets.api.hotpath; tested equal).
    """

    id = Int64Field()
    name = serializers.CharField()
    categoryId = Int64Field(source="category_id")
    status = serializers.ChoiceField(choices=PetStatus.choices)


class CategorySerializer(serializers.Serializer):
    id = Int64Field()
    name = serializers.CharField()
