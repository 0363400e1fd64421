"""The floors the API is measured against.

`pets_floor` runs the same SQL as `GET /v1/pets` (keyset on id, optional status
filter, limit + 1 rows to know whether a next page exists) and writes the rows
with orjson: no DRF, no authentication, no filter layer. The two trivial views
differ only in the bearer check, so their ratio is the cost of authentication.
"""

from __future__ import annotations

import orjson
from django.db import connection
from django.http import HttpResponse
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from pets.authentication import BearerKeyAuthentication

_SQL = (
    'SELECT "id", "name", "category_id", "status" FROM "pets_pet" '
    'WHERE "id" > %s {status} ORDER BY "id" ASC LIMIT %s'
)


def pets_floor(request):
    limit = int(request.GET.get("limit", 20))
    after = int(request.GET.get("after", 0))
    status = request.GET.get("status")
    params: list = [after]
    if status:
        params.append(status)
    params.append(limit + 1)
    with connection.cursor() as cursor:
        cursor.execute(_SQL.format(status='AND "status" = %s' if status else ""), params)
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
