"""The list's SQL as Django's compiler writes it for PetsView's values_list queryset: the
floor (bench/floor.py) runs it with psycopg's `%s`, the FastAPI peer (bench/peer.py) with
asyncpg's `$n`; bench/run.py checks that the hot path runs the floor's statement."""

SELECT = (
    'SELECT "pets_pet"."id" AS "id", "pets_pet"."name" AS "name", '
    '"pets_pet"."category_id" AS "category_id", "pets_pet"."status" AS "status" '
    'FROM "pets_pet"'
)
