"""The FastAPI peer the list is measured against: FastAPI + asyncpg under uvicorn (uvloop,
httptools), as its users would write a fast list endpoint.

`GET /v1/pets` runs the hot path's SQL (bench/statements.py, with asyncpg's `$n`
placeholders; asyncpg prepares it once per connection) on the same table and answers what our
list answers: a bare JSON array of `{id, name, categoryId, status}` written with orjson, and a
`Link: <...>; rel="next"` whose cursor is `<id>:<HMAC-SHA256>` as ours is, checked when sent
back; like the floor it authenticates nothing. `POST /v1/pets` (createPet against ours, and
the mixed benchmark, bench/mixed.py) is a create as FastAPI's users write one: it checks the
bearer key (the benchmark's, BENCH_TOKEN, compared in constant time, as our process compares
a key it keeps), validates the same three fields with pydantic (a string of 1 to 100
characters once trimmed, an int64 category id, one of the three statuses, `available` when
absent; strict types, unknown members ignored), inserts the pet in one `INSERT ...
RETURNING` and answers 201 with the same body and an absolute `Location`; an unknown
category is the foreign key's refusal, a 400. What it leaves out: rate limits, idempotency
keys, our Error shape. Serve it with `uvicorn bench.peer:app --loop uvloop --http httptools`
(bench/servers.py); DATABASE_URL names the database, PEER_POOL the connections per worker.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Literal

import asyncpg
import orjson
from fastapi import FastAPI, Header, HTTPException, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from bench.statements import SELECT

_INSERT = (
    "INSERT INTO pets_pet (name, category_id, status, created_at, updated_at) "
    "VALUES ($1, $2, $3, now(), now()) RETURNING id"
)
_TOKEN = os.environ.get("BENCH_TOKEN", "")

_KEY = hashlib.sha256(os.environ.get("SECRET_KEY", "bench-only-not-secret").encode()).digest()
_ORDER = " ORDER BY 1 ASC LIMIT $"
_STATEMENTS = {  # (status given, cursor given): the statement, as bench/floor.py builds it
    (False, False): SELECT + _ORDER + "1",
    (True, False): SELECT + ' WHERE "pets_pet"."status" = $1' + _ORDER + "2",
    (False, True): SELECT + ' WHERE "pets_pet"."id" > $1' + _ORDER + "2",
    (True, True): SELECT
    + ' WHERE ("pets_pet"."status" = $1 AND "pets_pet"."id" > $2)'
    + _ORDER
    + "3",
}


def _signature(value: str) -> str:
    digest = hmac.new(_KEY, value.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def encode_cursor(last_id: int) -> str:
    return f"{last_id}:{_signature(str(last_id))}"


def decode_cursor(cursor: str) -> int:
    value, _, signature = cursor.partition(":")
    if not value.isdigit() or not hmac.compare_digest(signature, _signature(value)):
        raise HTTPException(400, "Invalid cursor.")
    return int(value)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Opened as needed up to PEER_POOL: no more connections than requests in flight.
    size = int(os.environ.get("PEER_POOL", "8"))
    async with asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=size) as pool:
        app.state.pool = pool
        yield


app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


@app.get("/v1/pets")
async def list_pets(
    request: Request, limit: int = 20, status: str | None = None, cursor: str | None = None
) -> Response:
    if not 1 <= limit <= 100:
        raise HTTPException(400, "limit must be between 1 and 100.")
    params: list[object] = [p for p in (status,) if p]
    if cursor is not None:
        params.append(decode_cursor(cursor))
    sql = _STATEMENTS[(bool(status), cursor is not None)]
    rows = await request.app.state.pool.fetch(sql, *params, limit + 1)
    page = rows[:limit]
    body = orjson.dumps(
        [{"id": r[0], "name": r[1], "categoryId": r[2], "status": r[3]} for r in page]
    )
    response = Response(body, media_type="application/json")
    if len(rows) > limit:
        query = f"status={status}&" if status else ""
        next_url = f"{request.url.scheme}://{request.url.netloc}{request.url.path}"
        response.headers["Link"] = (
            f'<{next_url}?{query}limit={limit}&cursor={encode_cursor(page[-1][0])}>; rel="next"'
        )
    return response


class NewPet(BaseModel):
    model_config = ConfigDict(strict=True)

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
    categoryId: Annotated[int, Field(ge=1, le=2**63 - 1)]
    status: Literal["available", "pending", "sold"] = "available"


@app.post("/v1/pets", status_code=201)
async def create_pet(
    pet: NewPet, request: Request, authorization: Annotated[str, Header()] = ""
) -> Response:
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.encode(), _TOKEN.encode()):
        raise HTTPException(401, "Invalid or missing API key.")
    try:
        pk = await request.app.state.pool.fetchval(_INSERT, pet.name, pet.categoryId, pet.status)
    except asyncpg.ForeignKeyViolationError as exc:
        raise HTTPException(400, f"Unknown category {pet.categoryId}.") from exc
    body = orjson.dumps(
        {"id": pk, "name": pet.name, "categoryId": pet.categoryId, "status": pet.status}
    )
    location = f"{request.url.scheme}://{request.url.netloc}/v1/pets/{pk}"
    headers = {"Location": location}
    return Response(body, status_code=201, media_type="application/json", headers=headers)
