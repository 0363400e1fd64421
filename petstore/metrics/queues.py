"""petstore_queue_depth{queue}: messages waiting in each Celery queue, asked of the broker
at scrape time through kombu's own count (on Redis, the LLEN of the queue's lists).
Messages a worker has taken and not yet acknowledged, and tasks held for their countdown,
are not waiting: not counted."""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from petstore.celery import app as celery_app


class QueueDepthCollector:
    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "petstore_queue_depth",
            "Messages waiting in each Celery queue (read from the broker at scrape time).",
            labels=["queue"],
        )
        with celery_app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=1, timeout=2)
            channel = connection.default_channel
            for queue in settings.CELERY_TASK_QUEUES:
                # Returns (name, message count, consumers); kombu's stubs leave it out.
                declared = channel.queue_declare(queue=queue, passive=False)  # type: ignore[attr-defined]
                family.add_metric([queue], declared.message_count)
        yield family
