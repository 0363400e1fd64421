"""What a Celery worker does when it loses the broker: reconnect, whatever it was holding.

Celery 5.7.0 with kombu 5.7.0 (the newest releases) handles a lost broker connection by
collecting the connection, which detaches its transport, and then closing it. Whatever still
goes through the lost connection's channel afterwards finds no transport and fails with
`AttributeError: 'NoneType' object has no attribute 'hostname'` in kombu's redis transport:
its close, handing back the unacknowledged messages of the tasks that were running
(`acks_late`), and the acknowledgement of each of those tasks when it finishes. The worker
takes either for an unrecoverable error and exits; on a plain host nothing starts it again.

Here both are what they are, the loss of that connection:
- `Consumer` (`CELERY_WORKER_CONSUMER`): the error ends the cleanup of the connection that is
  already discarded, and the consumer reconnects as after any other connection loss;
- `Request` (the request class of every task, petstore/queueing.py): an acknowledgement that
  fails so is logged as one the broker could not take (kombu's "Couldn't ack"), as it is when
  the connection is known to be down.
Nothing is lost by it: a broker that is gone cannot take the messages back (a restarted Redis
has none of them), the running task finishes, and the database is the record of the work (the
sweep queues again whatever was asked for and not done, petstore/queueing.py).
"""

from __future__ import annotations

import logging
from typing import Any

from celery.worker.consumer import Consumer as CeleryConsumer
from celery.worker.request import Request as CeleryRequest
from kombu import Message

log = logging.getLogger(__name__)

# What a channel whose transport was detached raises (kombu's redis transport reads the
# detached transport's client for its connection parameters).
DETACHED_CHANNEL_ERRORS = (AttributeError,)


class Consumer(CeleryConsumer):
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        try:
            super().on_connection_error_after_connected(exc)
        except DETACHED_CHANNEL_ERRORS as error:
            if self.connection is not None:
                raise  # not the close of the discarded connection: a bug to see
            log.warning(
                "The lost broker connection could not hand back its unacknowledged messages "
                "(%s); reconnecting, the sweep queues their work again",
                error,
            )


class Request(CeleryRequest):
    # Celery's strategy passes everything after the message by keyword.
    def __init__(
        self, message: Message, *, connection_errors: tuple[type[BaseException], ...] = (),
        **kwargs: Any,
    ) -> None:  # fmt: skip
        errors = (*(connection_errors or ()), *DETACHED_CHANNEL_ERRORS)
        super().__init__(message, connection_errors=errors, **kwargs)
