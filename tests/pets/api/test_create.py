"""createPet: POST /v1/pets — strict NewPet in, 201 Pet with Location out."""

from __future__ import annotations

import pytest

from pets.models import Category, Pet
from tests.pets.helpers import assert_error, post_json


def test_it_creates_a_pet_and_answers_201_with_the_pet_and_its_location(api, dogs):
    response = post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id, "status": "sold"})
    assert response.status_code == 201
    pet = Pet.objects.get()
    assert response.json() == {
        "id": pet.id,
        "name": "Rex",
        "categoryId": dogs.id,
        "status": "sold",
    }
    assert response["Location"] == f"http://testserver/v1/pets/{pet.id}"
    assert (pet.name, pet.category, pet.status) == ("Rex", dogs, "sold")


def test_the_location_leads_to_the_new_pet(api, dogs):
    created = post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id})
    fetched = api.get(created["Location"])
    assert fetched.status_code == 200
    assert fetched.json() == created.json()


def test_status_defaults_to_available(api, dogs):
    response = post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id})
    assert response.json()["status"] == "available"
    assert Pet.objects.get().status == "available"


def test_names_need_not_be_unique(api, dogs):
    for _ in range(2):
        assert post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id}).status_code == 201
    assert Pet.objects.filter(name="Rex").count() == 2


def test_unknown_members_are_ignored_and_id_cannot_be_chosen(api, dogs):
    response = post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id, "id": 999, "x": 1})
    assert response.status_code == 201
    assert response.json()["id"] != 999
    assert set(response.json()) == {"id", "name", "categoryId", "status"}


def test_a_name_of_exactly_100_characters_is_accepted(api, dogs):
    response = post_json(api, "/v1/pets", {"name": "x" * 100, "categoryId": dogs.id})
    assert response.status_code == 201


def test_surrounding_whitespace_is_trimmed_from_the_name(api, dogs):
    response = post_json(api, "/v1/pets", {"name": "  Rex \u3000", "categoryId": dogs.id})
    assert response.json()["name"] == "Rex"


@pytest.mark.parametrize(
    "name",
    [
        "Re\x00x",
        "Re\tx",
        "Rex\n",  # at the end too: refused before trimming, not quietly dropped
        "\r\nRex",
        "Rex\x1b[2J",  # a terminal escape (clear screen)
        "Re\x07x",
        "Rex\x1f",
        "Re\x7fx",
        "Rex\x85",  # C1: NEL
        "Rex\x9b31m",  # C1: CSI
    ],
    ids=["nul", "tab", "newline", "crlf", "esc", "bel", "us", "del", "nel", "csi"],
)
def test_a_name_with_a_control_character_is_a_400_naming_name(api, dogs, name):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": name, "categoryId": dogs.id}), 400, "validation_error"
    )
    assert body["fields"] == {
        "name": ["Must not contain control characters (U+0000-U+001F, U+007F-U+009F)."]
    }
    assert body["message"] == "Invalid input: name."
    assert not Pet.objects.exists()


@pytest.mark.parametrize(
    "name",
    [
        "Rex\u202egpj.exe",  # RIGHT-TO-LEFT OVERRIDE
        "\u202aRex\u202c",  # LEFT-TO-RIGHT EMBEDDING ... POP DIRECTIONAL FORMATTING
        "Rex\u2066x\u2069",  # LEFT-TO-RIGHT ISOLATE ... POP DIRECTIONAL ISOLATE
        "Re\u200fx",  # RIGHT-TO-LEFT MARK
        "Re\u200bx",  # ZERO WIDTH SPACE
        "Re\u200dx",  # ZERO WIDTH JOINER
        "Re\u200cx",  # ZERO WIDTH NON-JOINER
        "Re\u2060x",  # WORD JOINER
        "\ufeffRex",  # BYTE ORDER MARK
        "Re\u00adx",  # SOFT HYPHEN
        "Rex\U000e0041",  # TAG LATIN CAPITAL LETTER A
    ],
    ids=["rlo", "lre-pdf", "lri-pdi", "rlm", "zwsp", "zwj", "zwnj", "wj", "bom", "shy", "tag"],
)
def test_a_name_with_a_format_character_is_a_400_naming_name(api, dogs, name):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": name, "categoryId": dogs.id}), 400, "validation_error"
    )
    assert body["fields"] == {
        "name": [
            "Must not contain invisible format characters (Unicode category Cf: "
            "bidirectional controls, zero-width characters, U+FEFF)."
        ]
    }
    assert body["message"] == "Invalid input: name."
    assert not Pet.objects.exists()


@pytest.mark.parametrize("name", ["Zoë", "Rex 🐕", "a\u00a0b", "\u00a1Olé!", "~tilde~"])
def test_printable_names_next_to_the_control_ranges_are_accepted(api, dogs, name):
    response = post_json(api, "/v1/pets", {"name": name, "categoryId": dogs.id})
    assert response.status_code == 201, response.content
    assert Pet.objects.get().name == name


@pytest.mark.parametrize(
    "name",
    # A lone surrogate is refused earlier, by the parser (tests/security/test_lone_surrogates.py).
    [5, 5.5, True, None, ["Rex"], {"n": "Rex"}, "", "   ", "x" * 101, "a\x00b"],
    ids=["int", "float", "bool", "null", "list", "object", "empty", "blank", "101", "nul"],
)
def test_an_invalid_name_is_a_400_naming_name(api, dogs, name):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": name, "categoryId": dogs.id}), 400, "validation_error"
    )
    assert list(body["fields"]) == ["name"]
    assert not Pet.objects.exists()


@pytest.mark.parametrize(
    "category_id",
    [True, False, "1", 1.0, 1.5, None, [1], 0, -1, 2**63, 424242],
    ids=[
        "true",
        "false",
        "str",
        "float1",
        "float",
        "null",
        "list",
        "zero",
        "neg",
        "2^63",
        "unknown",
    ],
)
def test_an_invalid_or_unknown_category_id_is_a_400_naming_category_id(api, dogs, category_id):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": "Rex", "categoryId": category_id}),
        400,
        "validation_error",
    )
    assert list(body["fields"]) == ["categoryId"]
    assert not Pet.objects.exists()


def test_a_boolean_category_id_is_refused_even_when_category_1_exists(api):
    Category.objects.create(pk=1, name="Ones")  # True == 1 in Python: must not match it
    body = assert_error(
        post_json(api, "/v1/pets", {"name": "Rex", "categoryId": True}), 400, "validation_error"
    )
    assert body["fields"]["categoryId"] == ["Must be an integer."]


def test_the_largest_int64_category_id_is_looked_up_not_crashed_on(api):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": "Rex", "categoryId": 2**63 - 1}),
        400,
        "validation_error",
    )
    assert body["fields"]["categoryId"] == [f"Unknown category {2**63 - 1}."]


@pytest.mark.parametrize("status", ["adopted", "", "SOLD", 1, None, True])
def test_an_invalid_status_is_a_400_naming_status(api, dogs, status):
    body = assert_error(
        post_json(api, "/v1/pets", {"name": "Rex", "categoryId": dogs.id, "status": status}),
        400,
        "validation_error",
    )
    assert list(body["fields"]) == ["status"]


def test_missing_required_fields_are_all_named(api):
    body = assert_error(post_json(api, "/v1/pets", {}), 400, "validation_error")
    assert set(body["fields"]) == {"name", "categoryId"}
    assert body["message"] == "Invalid input: name, categoryId."


@pytest.mark.parametrize("document", [[], ["Rex"], "Rex", 5, None, True])
def test_a_body_that_is_not_a_json_object_is_a_400(api, document):
    body = assert_error(post_json(api, "/v1/pets", document), 400, "bad_request")
    assert body["message"] == "The request body must be a JSON object."


def test_an_empty_body_is_a_400(api):
    response = api.generic("POST", "/v1/pets", "", content_type="application/json")
    assert_error(response, 400, "bad_request")


@pytest.mark.parametrize("raw", ['{"name": "Rex",', "{'name': 'Rex'}", '{"a": NaN}', "\xff"])
def test_malformed_json_is_a_400(api, raw):
    response = api.generic(
        "POST", "/v1/pets", raw.encode("latin-1"), content_type="application/json"
    )
    body = assert_error(response, 400, "bad_request")
    assert body["message"].startswith("Malformed JSON")
    assert not Pet.objects.exists()


def test_a_form_body_is_a_415(api, dogs):
    response = api.post("/v1/pets", {"name": "Rex", "categoryId": dogs.id}, format="multipart")
    assert_error(response, 415, "unsupported_media_type")
    assert not Pet.objects.exists()


def test_a_body_over_the_size_limit_is_a_413(api, dogs, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post_json(api, "/v1/pets", {"name": "x" * 2000, "categoryId": dogs.id})
    assert_error(response, 413, "payload_too_large")
    assert not Pet.objects.exists()
