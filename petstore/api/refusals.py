"""A service's refusal as the Error body: its sentence, its code, the code's HTTP status.

The services raise django.core.exceptions.ValidationError with a sentence and a `code` (the
dashboard shows the sentence, the commands print it). An app's API gives each of its codes
an HTTP status once, in a table (domains/api/errors.py), and its views call services through
`Refusals.run` (the base view's `service`): the refusal becomes `Refused`, which the exception
handler answers as it is. The conversion happens where the service is called, inside
`idempotency.run`'s operation, so a refused retry of a request that succeeded still replays
that success.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from django.core.exceptions import ValidationError
from rest_framework import status

from petstore.api.exceptions import Refused

_T = TypeVar("_T")


class Refusals:
    """An app's refusal codes with their HTTP statuses; a code not in the table answers
    `default` (422: well-formed, refused by a rule)."""

    def __init__(
        self,
        statuses: Mapping[str, int],
        *,
        default: int = status.HTTP_422_UNPROCESSABLE_ENTITY,
    ) -> None:
        self.statuses = dict(statuses)
        self.default = default

    @property
    def codes(self) -> list[str]:
        """The codes of the table, sorted: the enum the app's OpenAPI documents."""
        return sorted(self.statuses)

    def refused(self, error: ValidationError) -> Refused:
        """The service's sentence and code, with the code's status."""
        code = next((e.code for e in error.error_list if e.code), "") or "refused"
        message = " ".join(error.messages)
        return Refused(message, code=code, http_status=self.statuses.get(code, self.default))

    def run(self, call: Callable[[], _T]) -> _T:
        """`call()`'s result; its ValidationError raised as Refused."""
        try:
            return call()
        except ValidationError as error:
            raise self.refused(error) from None


# An app whose services refuse nothing of their own (every refusal answers 422).
NONE = Refusals({})
