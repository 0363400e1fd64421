"""Each pytest-xdist worker on Redis databases and a folder of its own (tests/settings.py), so
that no worker flushes, purges or counts what another keeps; outside xdist, the run's own."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from tests.settings import per_worker, shifted


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/2"),
        ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/2"),
        (
            "rediss://user:secret@cache:6380/3?ssl_cert_reqs=none",
            "rediss://user:secret@cache:6380/5?ssl_cert_reqs=none",
        ),
        (
            "unix:///tmp/petstore-test-x/run/redis.sock?db=0",
            "unix:///tmp/petstore-test-x/run/redis.sock?db=2",
        ),
        (
            "redis+socket:///tmp/petstore-test-x/run/redis.sock?virtual_host=1",
            "redis+socket:///tmp/petstore-test-x/run/redis.sock?virtual_host=3",
        ),
    ],
)
def test_a_redis_url_of_each_form_is_moved_to_a_higher_database(url, expected):
    assert shifted(url, 2) == expected


def test_a_worker_beyond_redis_s_sixteen_databases_is_refused_in_one_line():
    with pytest.raises(ValueError, match="start fewer workers"):
        shifted("redis://127.0.0.1:6379/13", 4)


def test_worker_n_takes_the_run_s_databases_plus_2n_and_a_folder_of_its_own():
    run = {
        "PETSTORE_VAR_DIR": "/tmp/run/var",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/1",
    }
    assert per_worker(run) == {}
    assert per_worker({**run, "PYTEST_XDIST_WORKER": "gw0"}) == {
        **run,
        "PETSTORE_TEST_XDIST_WORKER": "gw0",
        "PETSTORE_VAR_DIR": "/tmp/run/var/gw0",
    }
    gw1 = per_worker({**run, "PYTEST_XDIST_WORKER": "gw1"})
    assert gw1 == {
        "PETSTORE_TEST_XDIST_WORKER": "gw1",
        "PETSTORE_VAR_DIR": "/tmp/run/var/gw1",
        "REDIS_URL": "redis://127.0.0.1:6379/2",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
    }
    # A process the worker starts on tests.settings keeps what the worker took.
    assert per_worker({**run, **gw1, "PYTEST_XDIST_WORKER": "gw1"}) == {}


def test_this_process_and_what_it_starts_use_the_worker_s_own():
    """The settings and the environment the tests' processes inherit (service_env) agree."""
    assert os.environ["REDIS_URL"] == settings.REDIS_URL
    assert os.environ["CELERY_BROKER_URL"] == settings.CELERY_BROKER_URL
    assert os.environ["PETSTORE_VAR_DIR"] == str(settings.VAR_DIR)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        assert settings.VAR_DIR.name == worker
