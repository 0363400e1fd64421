"""Beat behind a lock: any number of `celery beat` processes, exactly one of them sending.

RedBeat's scheduler (celery-redbeat) keeps the schedule in Redis, each entry with the time
it last ran, and a lock (`petstore:beat::lock`) that a beat takes before its first tick and
renews at every tick for BEAT_LOCK_TIMEOUT seconds. A second beat waits for the lock, trying
every CELERY_BEAT_MAX_LOOP_INTERVAL; when the active beat dies, the lock lapses and the waiting one
takes over the same schedule where it was, so no entry runs twice and none is skipped beyond
the lapse. An entry's next run is written before its task is sent: a beat killed between the
two loses that one send, which the next period (or the sweep behind every task,
petstore/queueing.py) makes up; it never sends twice.

A beat whose lock is gone at a tick (Redis restarted and kept nothing, or the beat stalled
longer than the lock lasts) sends nothing more until it holds the lock again: it takes it at
once where no other beat has, and otherwise waits for it as a new beat does, then writes the
schedule again as a new beat does. A tick that cannot reach Redis sends nothing and is tried
again after BEAT_LOCK_TIMEOUT / 6; the process stays up, so a Redis restart never needs its
supervisor (the cluster test restarts Redis and counts every process restart).

The one thing added here: the active beat touches BEAT_TICKED_FILE at each tick, whose age
compose's health check reads (a waiting beat never touches it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from celery.utils.log import get_logger
from django.conf import settings
from redbeat import RedBeatScheduler
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockNotOwnedError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = get_logger(__name__)


class Scheduler(RedBeatScheduler):
    def tick(self, *args: Any, **kwargs: Any) -> float:
        try:
            interval = super().tick(*args, **kwargs)
        except LockNotOwnedError:
            logger.warning("beat: the lock is gone (Redis restarted?); sending nothing until held")
            return self.take_lock_again()
        except (RedisConnectionError, RedisTimeoutError) as error:
            logger.warning("beat: Redis unreachable (%s); trying again", error)
            return float(settings.CELERY_BEAT_MAX_LOOP_INTERVAL)
        Path(settings.BEAT_TICKED_FILE).touch()
        return interval

    def take_lock_again(self) -> float:
        try:
            self.lock.acquire()  # at once if no other beat holds it, else when it lapses
            # What a new beat writes first: a restarted Redis kept no schedule either (the
            # entries' times, where Redis kept them, stay as they are).
            self.setup_schedule()
        except (RedisConnectionError, RedisTimeoutError) as error:
            logger.warning("beat: Redis unreachable (%s); trying again", error)
            return float(settings.CELERY_BEAT_MAX_LOOP_INTERVAL)
        logger.info("beat: Acquired lock")
        return 0.0
