#!/usr/bin/env python
import os
import sys

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import execute_from_command_line


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
    # Settings that cannot load (no SECRET_KEY in a new terminal, a value that does not
    # parse) are one line naming what to set. Left to Django, every command would be
    # "unknown" first: a traceback starting `KeyError: '<command>'`.
    try:
        settings.INSTALLED_APPS  # noqa: B018 (reading it loads the settings)
    except ImproperlyConfigured as exc:
        sys.exit(f"manage.py: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
