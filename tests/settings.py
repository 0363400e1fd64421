"""The tests' settings: production's (petstore/settings.py, DEBUG off unless the environment
says otherwise) with the development tooling the tests drive in-process installed, as
`make run` installs it under DEBUG (`loaddomainsdemo`, `devdns`).

The run keeps its files in a folder of its own, never the checkout's var/ (where `make run`
keeps its data and its local CA), and where the environment names no PostgreSQL or Redis (a
laptop's `make test`) it starts its own from their wheels first (devtools/embedded.py); it
names all of them in the environment, so the settings below and every process a test starts
use the same. Here rather than in a pytest plugin: pytest-django imports these settings
before any conftest runs.
"""

import os

from devtools import embedded

os.environ.update(embedded.start_for_tests(os.environ))

from petstore.settings import *  # noqa: E402, F403
from petstore.settings import INSTALLED_APPS  # noqa: E402

if "devtools" not in INSTALLED_APPS:
    INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]
