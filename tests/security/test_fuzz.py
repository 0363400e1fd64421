"""Fuzzing, bounded by example count and repeatable (derandomized): no 5xx, no unhandled exception,
every refusal in the Error body.

- schemathesis in negative mode over every operation of the /v1 document (found
  in the document, so a new operation is fuzzed too), with a good key, a bad key
  and none;
- raw fuzzing of /v1 with hypothesis: any method, path, query, headers and body
  bytes, schema or not;
- hypothesis over the two parsers of untrusted strings: domain names
  (domains.dns.hostnames.normalize_hostname) and list cursors (petstore.api.pagination).
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote, urlencode

import pytest
import schemathesis
from django.core.exceptions import ValidationError as DjangoValidationError
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error

from domains.dns import hostnames
from pets.services import demo_categories_load
from petstore.api.exceptions import ErrorCode
from petstore.api.pagination import decode_cursor, encode_cursor

pytestmark = pytest.mark.django_db

# Each fuzzer of the API runs this many examples per case (derandomized: the same ones every
# run), so its time is a count of requests, never a race with the clock; `make fuzz` runs the
# long search with many more.
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES") or 15)

BOUNDED = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def assert_error_body(status: int, content_type: str, content: bytes, *, head=False) -> None:
    """A refusal is the Error body {code, message, status} with the response's status."""
    assert status < 500, content[:300]
    if status < 400:
        return
    assert content_type.startswith("application/json"), (status, content_type, content[:200])
    if head:
        assert content == b""  # HEAD: the headers of the GET, no body
        return
    body = json.loads(content)
    assert body["status"] == status
    assert body["code"] in ErrorCode.values
    assert isinstance(body["message"], str) and body["message"]


def refusals_are_error_bodies(ctx, response, case):
    """schemathesis check: every 4xx is the Error body."""
    headers = {name.lower(): values for name, values in response.headers.items()}
    assert_error_body(response.status_code, headers.get("content-type", [""])[0], response.content)


@pytest.mark.parametrize("who", ["good-key", "bad-key", "no-key"])
def test_negative_requests_to_every_operation_are_refused_cleanly(openapi_schema, alice_key, who):
    demo_categories_load()
    headers = {
        "good-key": {"Authorization": f"Bearer {alice_key.plaintext}"},
        "bad-key": {"Authorization": f"Bearer {alice_key.plaintext[:-2]}zz"},
        "no-key": {},
    }[who]
    operations = [result.ok() for result in openapi_schema.get_all_operations()]
    assert {op.label for op in operations} >= {"GET /pets", "POST /pets", "GET /pets/{petId}"}
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=schemathesis.GenerationMode.NEGATIVE))
        @BOUNDED
        def run(case):
            case.call_and_validate(
                headers=headers, checks=[not_a_server_error, refusals_are_error_bodies]
            )

        run()


_METHODS = st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"])
_SEGMENT = st.one_of(
    st.sampled_from(["pets", "categories", "openapi.json", "1", "-1", "9" * 30, "%00", ".."]),
    st.text(min_size=0, max_size=20),
)
_HEADER_VALUE = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=0, max_size=80
)


@given(
    method=_METHODS,
    segments=st.lists(_SEGMENT, min_size=1, max_size=4),
    query=st.dictionaries(
        st.sampled_from(["limit", "status", "cursor", "x"]), st.text(max_size=30)
    ),
    body=st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
            max_leaves=15,
        ).map(lambda v: json.dumps(v).encode()),
    ),
    content_type=st.sampled_from(
        [
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "",
        ]
    ),
    auth=st.sampled_from(["good", "none", "junk"]),
    junk=_HEADER_VALUE,
    idempotency_key=st.one_of(st.none(), _HEADER_VALUE),
)
@BOUNDED
def test_raw_fuzzing_of_v1_never_breaks_the_error_contract(
    alice_key, method, segments, query, body, content_type, auth, junk, idempotency_key
):
    client = APIClient()
    headers: dict[str, Any] = {}  # WSGI environ for the test client
    if auth == "good":
        headers["HTTP_AUTHORIZATION"] = f"Bearer {alice_key.plaintext}"
    elif auth == "junk":
        headers["HTTP_AUTHORIZATION"] = junk
    if idempotency_key is not None:
        headers["HTTP_IDEMPOTENCY_KEY"] = idempotency_key
    path = "/v1/" + "/".join(quote(s, safe="") for s in segments)
    if query:
        path += "?" + urlencode(query)
    response = client.generic(method, path, body, content_type=content_type, **headers)
    assert_error_body(
        response.status_code,
        response.get("Content-Type", ""),
        response.content,
        head=method == "HEAD",
    )


@pytest.fixture
def _raw_fuzz_settings(settings):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""


test_raw_fuzzing_of_v1_never_breaks_the_error_contract = pytest.mark.usefixtures(
    "_raw_fuzz_settings"
)(test_raw_fuzzing_of_v1_never_breaks_the_error_contract)


# --- domain names -----------------------------------------------------------------

_HOSTLIKE = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.text(alphabet="abcxyz019-_.*:/@ \u00e9\u00df\u0130\u200d\ufeffÅ", max_size=70),
        min_size=1,
        max_size=6,
    ).map(".".join),
    st.from_regex(r"[a-z0-9-]{1,70}(\.[a-z0-9-]{1,70}){1,5}\.?", fullmatch=True),
)


@given(raw=_HOSTLIKE)
@hypothesis_settings(max_examples=400, deadline=None, derandomize=True, database=None)
def test_domain_name_validation_accepts_or_refuses_and_nothing_else(raw):
    try:
        name = hostnames.normalize_hostname(raw)
    except DjangoValidationError as refused:
        assert refused.messages and all(refused.messages)
        assert refused.code
        return
    # What is accepted is the stored form: ASCII, lower case, within DNS lengths, stable.
    assert name.isascii() and name == name.lower()
    assert len(name) <= 253 and all(0 < len(label) <= 63 for label in name.split("."))
    assert hostnames.normalize_hostname(name) == name
    assert hostnames.subdomain_label(name)


# --- cursors ------------------------------------------------------------------------


@given(raw=st.one_of(st.text(max_size=200), st.binary(max_size=100).map(lambda b: b.hex())))
@hypothesis_settings(max_examples=300, deadline=None, derandomize=True, database=None)
def test_any_cursor_decodes_to_an_id_or_is_refused(raw):
    try:
        value = decode_cursor(raw)
    except DRFValidationError as refused:
        assert refused.detail == {"cursor": ["Invalid cursor."]}
        return
    assert type(value) is int


@given(last_id=st.integers(min_value=0, max_value=2**63 - 1), flip=st.integers(min_value=0))
@hypothesis_settings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_cursors_round_trip_and_any_tampering_is_refused(last_id, flip):
    cursor = encode_cursor(last_id)
    assert decode_cursor(cursor) == last_id
    position = flip % len(cursor)
    replacement = "A" if cursor[position] != "A" else "B"
    tampered = cursor[:position] + replacement + cursor[position + 1 :]
    with pytest.raises(DRFValidationError):
        decode_cursor(tampered)
