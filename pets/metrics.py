"""The pets' families: how often listPets' kept pages answer (pets/api/hotpath.py).

Two counters rather than one with a `result` label: a lookup is counted before the kept
pages are asked, a miss where a page is read, and neither place knows the other's outcome.
The hit rate is 1 - misses / lookups, over every process (petstore/metrics/store.py).
"""

from __future__ import annotations

from petstore.metrics import store

KEPT_PAGE_LOOKUPS = store.counter(
    "petstore_list_kept_page_lookups_total",
    "listPets' pages asked of the pages a web process keeps (API_LIST_PAGES_KEPT).",
)
KEPT_PAGE_MISSES = store.counter(
    "petstore_list_kept_page_misses_total",
    "listPets' pages read from the database on a lookup the kept pages could not answer "
    "(a page not kept yet, or kept under a list version a write has since moved).",
)
