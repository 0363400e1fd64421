"""Settings for the Petstore service, driven by the environment, one module per subject.

Each variable is declared once where it is read (petstore.env.Section: name, default, one
line of doc); `manage.py settingsreference` writes docs/configuration.md and .env.example
from those declarations, and a test keeps the committed files equal to them.

PostgreSQL and Redis everywhere. With no DATABASE_URL and REDIS_URL they are the embedded
servers of this installation, on unix sockets in PETSTORE_VAR_DIR, which `make run` starts
(devtools/embedded.py); production names its own. There is no other code path.
"""

# ruff: noqa: I001
# In the order of the configuration reference's sections; each module imports what it
# reads from the others.
from petstore.settings.core import *  # noqa: F403
from petstore.settings.data import *  # noqa: F403
from petstore.settings.security import *  # noqa: F403
from petstore.settings.api import *  # noqa: F403
from petstore.settings.domains import *  # noqa: F403
from petstore.settings.dns01 import *  # noqa: F403
from petstore.settings.celery import *  # noqa: F403
from petstore.settings.edge import *  # noqa: F403
from petstore.settings.observability import *  # noqa: F403
