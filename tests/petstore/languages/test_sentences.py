"""A sentence's English, the text stored beside it (petstore/sentences.py), is what gettext
reads for it in the platform's language, whichever language is active: every msgid the code
marks, with values of each kind in its placeholders (a host name, a number, a sentence), and
the sentences made of others (a label, a refusal, sentences joined)."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import translation
from django.utils.translation import gettext_lazy

from domains.choices import State
from petstore.sentences import Sentence, joined, label, refusal
from tests.petstore.languages.test_catalogue import marked_strings

PLACEHOLDER = re.compile(r"%\((\w+)\)([sd])")
# A value that is itself a sentence, translated in German, so a nested one read in the
# active language would show.
NESTED = Sentence("%(hostname)s verifies again and is served.", {"hostname": "www.example.test"})


def read_in_platform_language(sentence: Sentence) -> str:
    """The English as gettext reads it: the sentence in the platform's language activated."""
    with translation.override(settings.LANGUAGE_CODE):
        return str(sentence)


def with_values(msgid: str) -> Sentence:
    values: dict[str, str | int | Sentence] = {}
    for number, (name, kind) in enumerate(PLACEHOLDER.findall(msgid)):
        if kind == "d":
            values[name] = 7
        else:
            values[name] = NESTED if number % 2 == 0 else "shop.example.test"
    return Sentence(msgid, values)


def test_every_marked_sentence_reads_in_english_as_gettext_reads_it():
    sentences = [with_values(msgid) for msgid in sorted(marked_strings()) if "%%" not in msgid]
    assert len(sentences) > 500
    with translation.override("de"):
        german = [str(sentence) for sentence in sentences]
        english = [sentence.english() for sentence in sentences]
        assert translation.get_language() == "de"
    assert english == [read_in_platform_language(sentence) for sentence in sentences]
    # German is active above: the same sentences do read otherwise in it.
    assert sum(e != g for e, g in zip(english, german, strict=True)) > 500


def test_sentences_made_of_others_read_in_english_as_gettext_reads_them():
    refused = ValidationError(
        [
            ValidationError(
                gettext_lazy("%(name)s is not a valid domain name (%(reason)s)."),
                params={"name": "-ab.example.com", "reason": NESTED},
            ),
            ValidationError(gettext_lazy("Enter the domain name without a port.")),
        ]
    )
    made = [
        label(State.VERIFIED.label),
        refusal(refused),
        joined(NESTED, Sentence("Enter the domain name without a port.")),
        Sentence(""),
        Sentence("100% of them, as written"),  # no values: a literal % stays
    ]
    with translation.override("de"):
        english = [sentence.english() for sentence in made]
    assert english == [read_in_platform_language(sentence) for sentence in made]
    assert english[-2:] == ["", "100% of them, as written"]
