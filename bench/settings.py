"""Production settings plus the benchmark-only URLs (the floor view)."""

from petstore.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
