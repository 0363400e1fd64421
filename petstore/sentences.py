"""A sentence written now and read later, in its reader's language.

What a check or an event says is stored when it happens, but read on a page or in a mail in
whichever language the reader chose (petstore/languages.py). So the sentence is kept as its
English msgid (marked with `gettext_noop` where it is written, so it is in the catalogue) and
its values, and rendered when it is read: `gettext(msgid) % values`, each value that is itself
a sentence rendered first. The English text is stored beside it too, for what stays English
(the API, the webhooks' body, the commands) and for a row written before sentences were kept,
which `shown` reads as it is (docs/adr/0020-translations-compiled-and-committed.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import translation

Value = Union[str, int, "Sentence"]


@dataclass(frozen=True)
class Sentence:
    """`msgid % values`, read in the active language; a msgid without values is a sentence
    with no placeholder (and is not %-formatted, so a literal % stays)."""

    msgid: str
    values: Mapping[str, Value] = field(default_factory=dict)

    def __str__(self) -> str:
        return self._said(translation.gettext)

    def english(self) -> str:
        """The sentence in the platform's language (LANGUAGE_CODE), what is stored as text:
        its msgid as written, since every msgid is in that language (settings.LANGUAGE_CODE).
        Not read through gettext under `translation.override`: switching the active language
        takes a lock that all of a worker's threads share, and a check stores several
        sentences (tests/petstore/languages/test_sentences.py holds the two equal)."""
        return self._said(_as_written)

    def _said(self, read: Callable[[str], str]) -> str:
        """`msgid % values` with each string read by `read`, a value that is a sentence too."""
        if not self.msgid:
            return ""  # gettext("") is the catalogue's header
        text = read(self.msgid)
        if not self.values:
            return text
        return text % {
            name: value._said(read) if isinstance(value, Sentence) else value
            for name, value in self.values.items()
        }

    def stored(self) -> dict[str, Any]:
        """As a JSON column keeps it."""
        values = {
            name: value.stored() if isinstance(value, Sentence) else value
            for name, value in self.values.items()
        }
        return {"msgid": self.msgid, "values": values}

    @classmethod
    def read(cls, stored: Any) -> Sentence | None:
        """The sentence `stored()` wrote; None for anything else (nothing stored)."""
        if not isinstance(stored, dict) or not isinstance(stored.get("msgid"), str):
            return None
        values = {
            name: cls.read(value) if isinstance(value, dict) else value
            for name, value in (stored.get("values") or {}).items()
        }
        return cls(stored["msgid"], {k: v for k, v in values.items() if v is not None})


def _as_written(msgid: str) -> str:
    return msgid


def joined(*parts: Sentence) -> Sentence:
    """Sentences said one after the other (a space between), as one."""
    if len(parts) == 1:
        return parts[0]
    placeholders = " ".join(f"%(s{i})s" for i in range(len(parts)))
    return Sentence(placeholders, {f"s{i}": part for i, part in enumerate(parts)})


def label(marked: Any) -> Sentence:
    """A label marked with `gettext_lazy` (a choice's) as a sentence: its msgid, which is its
    text in the platform's language, read in the reader's."""
    with translation.override(settings.LANGUAGE_CODE):
        return Sentence(str(marked))


def refusal(error: ValidationError) -> Sentence:
    """A ValidationError's messages, each marked with `gettext_lazy` and its params apart,
    as one sentence read in the reader's language (one not marked stays as it is)."""
    parts = []
    for item in error.error_list:
        values = {
            name: value if isinstance(value, int | Sentence) else str(value)
            for name, value in (item.params or {}).items()
        }
        parts.append(Sentence(label(item.message).msgid, values))
    return joined(*parts)


def shown(text: str, stored: Any) -> str:
    """What a row says, in the active language: its stored sentence, or, for a row written
    before sentences were kept (or with none), its stored text as it is."""
    sentence = Sentence.read(stored)
    return str(sentence) if sentence is not None else text
