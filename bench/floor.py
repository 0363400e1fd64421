"""The floors the API is measured against.

`pets_floor` runs the same SQL as `GET /v1/pets`, byte for byte (keyset on id,
optional status filter, limit + 1 rows to know whether a next page exists;
bench/run.py checks the two statements are equal before measuring) and writes
the rows with orjson: no DRF, no authentication, no filter layer. The two trivial views
differ only in the bearer check, so their ratio is the cost of authentication.
"""

from __future__ import annotations

import orjson
from django.db import connection
from django.http import HttpResponse
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.statements import SELECT
from petstore.api.authentication import BearerKeyAuthentication


def pets_floor(request):
    limit = int(request.GET.get("limit", 20))
    status = request.GET.get("status")
    after = request.GET.get("after")
    where, params = [], []
    if status:
        where.append('"pets_pet"."status" = %s')
        params.append(status)
    if after:
        where.append('"pets_pet"."id" > %s')
        params.append(int(after))
    sql = SELECT
    if where:
        sql += " WHERE " + (where[0] if len(where) == 1 else "(" + " AND ".join(where) + ")")
    sql += " ORDER BY 1 ASC LIMIT %s"
    params.append(limit + 1)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()[:limit]
    body = orjson.dumps(
        [{"id": r[0], "name": r[1], "categoryId": r[2], "status": r[3]} for r in rows]
    )
    return HttpResponse(body, content_type="application/json")


class TrivialOpen(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"ok": True})


class TrivialAuthenticated(TrivialOpen):
    authentication_classes = [BearerKeyAuthentication]
    permission_classes = [IsAuthenticated]
