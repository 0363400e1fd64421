"""Request bodies: above DATA_UPLOAD_MAX_MEMORY_SIZE a 413, deep nesting a 400,
both with the Error body; never a 500."""

from __future__ import annotations

import pytest

from tests.pets.helpers import assert_error

pytestmark = pytest.mark.django_db

LIMIT = 64 * 1024


def _post(api, body: bytes):
    return api.generic("POST", "/v1/pets", body, content_type="application/json")


def test_the_documented_body_limit_is_64_kib(settings):
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == LIMIT


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"[" * LIMIT, id="64KiB-of-open-brackets"),
        pytest.param(b"[" * 30000 + b"]" * 30000, id="balanced-30000-deep"),
        pytest.param(b'{"a":' * 10000 + b"1" + b"}" * 10000, id="objects-10000-deep"),
    ],
)
def test_deeply_nested_json_is_a_400_not_a_crash(api, body):
    assert len(body) <= LIMIT
    body_json = assert_error(_post(api, body), 400, "bad_request")
    assert body_json["message"].startswith("Malformed JSON")


def test_a_body_above_the_limit_is_a_413(api):
    response = _post(api, b'{"name": "' + b"x" * LIMIT + b'", "categoryId": 1}')
    assert_error(response, 413, "payload_too_large")


def test_a_huge_flat_array_within_the_limit_is_refused_as_invalid_input(api):
    body = b"[" + b"1," * (LIMIT // 2 - 2) + b"1]"
    assert len(body) <= LIMIT
    assert _post(api, body).status_code == 400
