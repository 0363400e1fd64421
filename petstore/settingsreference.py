"""The configuration reference and `.env.example`, written from the settings' declarations
(petstore.env.DECLARED, filled as the settings are read): `manage.py settingsreference`
writes them, and a test keeps the committed files equal to what it would write."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from itertools import groupby

from petstore.env import Setting

# Read by compose.yaml itself, never by the settings: compose's own database password.
COMPOSE_ONLY = {
    "POSTGRES_PASSWORD": "The password of compose's PostgreSQL user `petstore`: letters, digits.",
}
COMPOSE_ONLY_MARK = "# --- compose.yaml only (not read by the settings) "
WIDTH = 92  # .env.example's lines

REFERENCE_HEAD = """\
# Configuration

<!-- Written by `manage.py settingsreference` from the declarations in petstore/settings/;
edit those, not this file. -->

Everything is read from the environment by the settings (`petstore/settings/`, one module per
section below); a value that cannot be parsed stops the process at start-up, in one line
naming the variable. The defaults are production's, except where DEBUG changes them; `make
run` turns DEBUG on through `var/local.env`, read only where `PETSTORE_ENV_FILE` names it.
`.env.example`, at the repository's root, lists every variable as a starting point for a
deployment.

A flag or a number set but empty reads as its default; a text or a list set but empty is
empty (the setting says what that means). A secret (marked below) may instead be read from a
file: `NAME_FILE=/run/secrets/name` (systemd credentials, container secrets), so that it never
sits in the environment; setting both is refused.
"""

ENV_HEAD = """\
# The environment of a production deployment: copy to .env and fill in the lines left empty.
# Every variable the settings read is here; a commented line shows its default. Written by
# `manage.py settingsreference` from the declarations in petstore/settings/ (meanings:
# docs/configuration.md). Plain NAME=value lines only (no quotes, no comment after a value):
# compose's env_file and a shell's `. ./.env` read them alike.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference(settings: Iterable[Setting]) -> str:
    """docs/configuration.md: a table per section, in the order the settings read them."""
    parts = [REFERENCE_HEAD]
    for section, members in groupby(settings, key=lambda setting: setting.section):
        parts.append(f"\n## {section}\n\n| Variable | Default | Meaning |\n|---|---|---|\n")
        for setting in members:
            secret = " Secret: or `" + setting.name + "_FILE`." if setting.secret else ""
            parts.append(
                f"| `{setting.name}` | {_cell(setting.default)} | {_cell(setting.doc)}{secret} |\n"
            )
    return "".join(parts)


def env_example(settings: Iterable[Setting]) -> str:
    """.env.example: each variable with its one line of doc, set to production's value where
    it has one, else its default commented out."""
    parts = [ENV_HEAD]
    for section, members in groupby(settings, key=lambda setting: setting.section):
        parts.append(f"\n# --- {section} ".ljust(WIDTH, "-") + "\n")
        for setting in members:
            parts.extend(f"# {line}\n" for line in textwrap.wrap(setting.doc, WIDTH - 2))
            if setting.example is not None:
                parts.append(f"{setting.name}={setting.example}\n")
            else:
                parts.append(f"# {setting.name}={_plain(setting.default)}\n")
    parts.append("\n" + COMPOSE_ONLY_MARK.ljust(WIDTH - 1, "-") + "\n")
    for name, doc in COMPOSE_ONLY.items():
        parts.extend(f"# {line}\n" for line in textwrap.wrap(doc, WIDTH - 2))
        parts.append(f"{name}=\n")
    return "".join(parts)


def _plain(default: str) -> str:
    """A default as a line of the file can hold it: its first value in backquotes, a flag's
    1 or 0, and nothing for `empty` or a default described in words."""
    if quoted := re.search(r"`([^`]*)`", default):
        return quoted.group(1)
    first = re.split(r"[ ;,]", default, maxsplit=1)[0]
    return {"on": "1", "off": "0"}.get(first, "")
