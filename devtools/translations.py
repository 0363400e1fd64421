"""The translations' catalogues: `python -m devtools.translations` compiles each
locale/<code>/LC_MESSAGES/django.po into the django.mo beside it, with Babel, which is pure
Python (GNU gettext's msgfmt is not on a machine with only Python). The .mo files are
committed, so the service and its image need no compiler; the suite holds each equal to its
.po compiled here (tests/petstore/languages/test_catalogue.py). Adding strings:
docs/contributors/translations.md.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def catalogues() -> list[Path]:
    """Every language's .po file."""
    return sorted(LOCALE_DIR.glob("*/LC_MESSAGES/django.po"))


def compiled(po: Path) -> bytes:
    """The .mo file `po` compiles to (fuzzy entries left out, as msgfmt leaves them)."""
    with po.open("rb") as source:
        catalogue = read_po(source)
    out = io.BytesIO()
    write_mo(out, catalogue, use_fuzzy=False)
    return out.getvalue()


def main() -> int:
    for po in catalogues():
        mo = po.with_suffix(".mo")
        mo.write_bytes(compiled(po))
        print(f"compiled {po.relative_to(LOCALE_DIR.parent)} -> {mo.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
