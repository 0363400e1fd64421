"""The tests' settings: production's (petstore/settings.py, DEBUG off unless the environment
says otherwise) with the development tooling the tests drive in-process installed, as
`make run` installs it under DEBUG (`loaddomainsdemo`, `devdns`)."""

from petstore.settings import *  # noqa: F403
from petstore.settings import INSTALLED_APPS

if "devtools" not in INSTALLED_APPS:
    INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]
