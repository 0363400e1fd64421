"""The process's one event loop for DNS, and the slots its questions take turns in.

A checks worker runs its batches on 16 threads. Each call of `lookups` hands its questions
to this one loop, in a thread of its own, and waits for the answers. So a server that
never answers holds the sockets of its own questions, never a share of the process's
asking, and 16 threads never run 16 loops that each give the interpreter up at every
system call and read their answers too late (docs/decisions/domain-sweep.md, "One loop per
process").

At most PROCESS_IN_FLIGHT questions of the process are in flight at once (each holds a
socket). A waiting question of an earlier call takes a freed slot before one of a later
call, so a call's follow-up questions are not queued behind every call that came after it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")

# Questions of one process in flight at once, across its calls: the sockets it holds.
PROCESS_IN_FLIGHT = 200
# How often a caller waiting for the loop looks whether the loop's thread still runs.
ALIVE_EVERY = 1.0


class Slots:
    """PROCESS_IN_FLIGHT slots; waiting questions are served in the order of their calls."""

    def __init__(self) -> None:
        self.taken = 0
        # (call order, arrival, future): the earliest call's first waiting question on top.
        self.waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self.arrivals = itertools.count()

    async def take(self, order: int) -> None:
        """Wait for a slot, before any question of a later call (`order`)."""
        if self.taken < PROCESS_IN_FLIGHT and not self.waiting:
            self.taken += 1
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self.waiting, (order, next(self.arrivals), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.give()  # handed over as it was cancelled: pass it on
            raise

    def give(self) -> None:
        """Free a slot: the earliest call's waiting question takes it."""
        self.taken -= 1
        while self.waiting and self.taken < PROCESS_IN_FLIGHT:
            _, _, future = heapq.heappop(self.waiting)
            if not future.done():  # one cancelled while waiting is skipped
                self.taken += 1
                future.set_result(None)


class SharedLoop:
    """An event loop running in a daemon thread of this process, its slots, and the order
    its calls came in."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.slots = Slots()
        self.calls = itertools.count()
        self.thread = threading.Thread(target=self.loop.run_forever, name="dns", daemon=True)
        self.thread.start()


_shared: SharedLoop | None = None
_starting = threading.Lock()


def shared() -> SharedLoop:
    """This process's loop, started on first use; a forked child starts its own (the parent's
    thread does not exist in it), and so does a process whose loop's thread has ended."""
    global _shared
    with _starting:
        if _shared is None or _shared.pid != os.getpid() or not _shared.thread.is_alive():
            _shared = SharedLoop()
        return _shared


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run `coroutine` on the process's loop and wait for its result (from any thread but
    the loop's own, an async caller's included). Every call ends within its lifetime once
    it runs; a loop whose thread has ended answers nothing, and the caller hears so instead
    of waiting for ever (the next call starts a new loop)."""
    loop = shared()
    if threading.current_thread() is loop.thread:
        coroutine.close()
        raise RuntimeError("the DNS loop cannot wait for itself")
    future = asyncio.run_coroutine_threadsafe(coroutine, loop.loop)
    while True:
        try:
            return future.result(timeout=ALIVE_EVERY)
        except TimeoutError:
            if not loop.thread.is_alive():
                future.cancel()
                raise RuntimeError("the DNS loop's thread ended before it answered") from None
