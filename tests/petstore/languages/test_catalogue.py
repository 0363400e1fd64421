"""The German catalogue is complete and compiled: every string the code and the templates
mark for translation is in locale/de/LC_MESSAGES/django.po with a translation (a string
marked but not translated fails here), and the committed django.mo is that .po compiled
(devtools/translations.py), so what is served is what was reviewed."""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.extract import extract_python
from babel.messages.pofile import read_po
from django.conf import settings
from django.utils.translation.template import templatize

from devtools.translations import catalogues, compiled

ROOT = Path(settings.BASE_DIR)
# Where owner-facing strings live: the apps and the ground floor, and the templates.
SOURCES = ["petstore", "pets", "domains"]
# Django's makemessages keywords (django/core/management/commands/makemessages.py).
KEYWORDS = {
    "_": None, "gettext": None, "gettext_lazy": None, "gettext_noop": None,
    "ngettext": (1, 2), "ngettext_lazy": (1, 2),
    "pgettext": ((1, "c"), 2), "pgettext_lazy": ((1, "c"), 2),
    "npgettext": ((1, "c"), 2, 3), "npgettext_lazy": ((1, "c"), 2, 3),
}  # fmt: skip


def _marked(source: str) -> set[str]:
    found = extract_python(io.BytesIO(source.encode()), KEYWORDS, [], {})
    # The msgid is the first argument, after the context where the function takes one.
    marked = set()
    for _, name, message, _ in found:
        if message is None:
            continue  # a call on a variable (petstore/sentences.py reads a stored msgid)
        if isinstance(message, str):
            marked.add(message)
        else:
            msgid = message[1 if str(name).startswith(("p", "np")) else 0]
            marked.add(str(msgid))
    return marked


def marked_strings() -> set[str]:
    """Every msgid the Python modules and the templates mark, as makemessages finds them."""
    found: set[str] = set()
    for package in SOURCES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found |= _marked(path.read_text())
    for path in (ROOT / "templates").rglob("*"):
        if path.suffix in {".html", ".txt"} and "i18n" in path.read_text():
            # templatize writes the template as gettext() calls among filler, indented as
            # the template was, which Python's tokenizer refuses: the calls, unindented.
            calls = templatize(path.read_text(), origin=str(path)).splitlines()
            found |= _marked("\n".join(line.lstrip() for line in calls))
    return found


def test_the_catalogue_has_every_marked_string_translated():
    [po] = [path for path in catalogues() if path.parent.parent.name == "de"]
    with po.open("rb") as source:
        catalogue = read_po(source)
    translated = {
        (m.id if isinstance(m.id, str) else m.id[0])
        for m in catalogue
        if m.id and not m.fuzzy and all(m.string if isinstance(m.string, tuple) else [m.string])
    }
    marked = marked_strings()
    assert len(marked) > 500  # the extraction found the dashboard's strings
    missing = sorted(marked - translated)
    assert not missing, f"marked, not translated (docs/contributors/translations.md): {missing}"


def test_each_committed_mo_is_its_po_compiled():
    assert catalogues()
    for po in catalogues():
        assert po.with_suffix(".mo").read_bytes() == compiled(po), (
            f"{po.with_suffix('.mo')} is out of date: run `python -m devtools.translations`"
        )


def test_every_language_offered_has_a_catalogue():
    have = {po.parent.parent.name for po in catalogues()}
    offered = {code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE}
    assert offered == have
