"""The tests' settings: production's (petstore/settings/, DEBUG off unless the environment
says otherwise) with the development tooling the tests drive in-process installed, as
`make run` installs it under DEBUG (`loaddomainsdemo`, `devdns`).

The run keeps its files in a folder of its own, never the checkout's var/ (where `make run`
keeps its data and its local CA), and where the environment names no PostgreSQL or Redis (a
laptop's `make test`) it starts its own from their wheels first (devtools/embedded.py); it
names all of them in the environment, so the settings below and every process a test starts
use the same. Here rather than in a pytest plugin: pytest-django imports these settings
before any conftest runs.

Under pytest-xdist (`make test` runs three workers) every worker inherits those variables from
the controller, which imported this module first; each then takes Redis databases and a
folder of its own (`per_worker`), so that no worker flushes, purges or counts another's
keys. pytest-django already gives each worker its own test database (test_<name>_gw<N>).
"""

import os
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from devtools import embedded

# Redis numbers its databases 0..15 by default; worker N takes the run's two numbers plus 2N.
REDIS_DATABASES = 16
# Where each form of Redis URL the run may be given keeps its database number: the path of
# redis://host/N, the query of unix://path?db=N (the embedded server's) and of
# redis+socket://path?virtual_host=N (kombu's name for the same).
QUERY_DB = {"unix": "db", "redis+socket": "virtual_host"}

# Names the xdist worker whose databases and folder the variables already are.
TAKEN_BY = "PETSTORE_TEST_XDIST_WORKER"


def shifted(url: str, by: int) -> str:
    """`url` with its Redis database number raised by `by` (an absent number is 0)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    if parts.scheme in QUERY_DB:
        db = int(query.get(QUERY_DB[parts.scheme]) or 0) + by
    elif parts.scheme in ("redis", "rediss"):
        db = int(parts.path.strip("/") or 0) + by
    else:
        raise ValueError(f"cannot tell the Redis database of {url!r} for the xdist workers")
    if db >= REDIS_DATABASES:
        raise ValueError(
            f"{url!r} for xdist worker takes database {db}: Redis has 0..{REDIS_DATABASES - 1}; "
            "start fewer workers (-n) or name a lower database"
        )
    if parts.scheme in QUERY_DB:
        # The head as given: urlunsplit would drop the `//` of an empty host (unix:///path).
        return f"{url.partition('?')[0]}?{urlencode({**query, QUERY_DB[parts.scheme]: db})}"
    return urlunsplit(parts._replace(path=f"/{db}"))


def per_worker(environ: Mapping[str, str]) -> dict[str, str]:
    """For xdist worker gw<N>: its Redis databases (the cache's and the broker's, each plus
    2N) and its own folder in the run's; nothing outside xdist."""
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    # A process a test starts on these settings (`manage.py check`, `make run`) inherits both
    # the worker's name and what it took already: never twice.
    if not worker or environ.get(TAKEN_BY) == worker:
        return {}
    number = int(worker.removeprefix("gw"))
    found = {
        TAKEN_BY: worker,
        "PETSTORE_VAR_DIR": os.path.join(environ["PETSTORE_VAR_DIR"], worker),
    }
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        if environ.get(name):
            found[name] = shifted(environ[name], 2 * number)
    return found


os.environ.update(embedded.start_for_tests(os.environ))
os.environ.update(per_worker(os.environ))

from petstore.settings import *  # noqa: E402, F403
from petstore.settings import INSTALLED_APPS  # noqa: E402

if "devtools" not in INSTALLED_APPS:
    INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]

# The suite's names live in `.test` zones its loopback DNS servers serve, as `make run`'s do;
# every other name outside the public DNS stays refused (tests/security/test_private_names.py
# takes `.test` away too). Loopback addresses stay refused unless a fixture that starts a
# loopback server allows them (OUTBOUND_ALLOWED_NETWORKS: tests/fixtures/).
DOMAINS_LOCAL_SUFFIXES = ["test"]

# A transactional test ends with Django's flush: production's backend with a flush of DELETEs
# (tests/database/). Where it is a TRUNCATE of every table, the audit log's refuses it
# (domains.0022_audit_append_only) unless the connection says so, as these do.
DATABASES["default"]["ENGINE"] = "tests.database"  # noqa: F405
DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c petstore.audit_truncate=on"  # noqa: F405
