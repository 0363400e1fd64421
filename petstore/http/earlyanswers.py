"""Early answers end cleanly on a kept-alive connection: a request whose body the application
answered without reading to its end (a 413 decided by Content-Length, a 401 or a 400 decided
before the body was read) either has the rest read and thrown away, or its answer says
`Connection: close`.

Why the server cannot be left to it: on HTTP/1.1 the next request on a connection starts
where this one's body ends, so a server that did not read the body must either read it or
close. granian closes, but only once the application has let go of the body, which can be
after the answer left without `Connection: close`: the client (or the edge, which reuses
its connections to the web processes for every client) then sends its next request on a
connection the server is closing, and that request fails ("Server disconnected", a 502).

So, for a request with a body (a Content-Length above zero, or chunked) and only then, this
wrapper counts what the application reads, holds the answer's start until the application
returns, and then:

- the body read to its end: the answer as it is, the connection kept;
- the rest of the body at most DRAIN_LIMIT: read and discarded by a thread of its own while
  the answer waits at most DRAIN_DEADLINE; all of it in time, the connection is kept;
- otherwise (more than DRAIN_LIMIT, slower than DRAIN_DEADLINE, or DRAINERS threads already
  draining): the answer says `Connection: close`, and the server closes the connection after it.

The drain runs on a thread of its own because granian's body reads block with no timeout: the
worker's thread waits for it on an event with a deadline, and goes back to serving. A drain
that missed the deadline goes on to DRAIN_LIMIT (the answer already says close): the
connection keeps being read while the answer is written, so a client still sending gets the
answer rather than a reset. Behind the edge every body up to the most the app accepts
arrives whole (the edge buffers it, domains/edge/caddy.py), so the drain reads what is there.

Only what `python -m petstore.webserver` serves (petstore/wsgi.py's `served`): Django's own
development and live servers read the rest of every body themselves, and refuse hop-by-hop
headers such as `Connection` from an application (PEP 3333).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# The most of an unread body read to keep its connection (Go's server reads as much): four
# times what the app accepts (64 KiB), so an upload it refused keeps its connection, and
# little enough that a client sending megabytes to be refused costs a worker milliseconds.
DRAIN_LIMIT = 256 * 1024
# How long a worker's thread waits for that: the time it is not serving anyone. A client on
# loopback or behind the edge sends 256 KiB in milliseconds; a slower one pays a new connection.
DRAIN_DEADLINE = 0.2
# Drains under way at once in a process; past that, answers say close at once. Each holds a
# thread blocked on a client, until its body ends, reaches DRAIN_LIMIT or the connection drops.
DRAINERS = 16
CHUNK = 64 * 1024

StartResponse = Callable[..., Any]
WSGIApplication = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_draining = threading.BoundedSemaphore(DRAINERS)


class CountingInput:
    """`wsgi.input` as the application reads it, counting the bytes and noting its end."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.read_bytes = 0
        self.ended = False

    def _seen(self, data: bytes, asked: int | None) -> bytes:
        self.read_bytes += len(data)
        if not data and asked != 0:
            self.ended = True
        return data

    def read(self, size: int | None = None) -> bytes:
        data = self.stream.read() if size is None or size < 0 else self.stream.read(size)
        return self._seen(data, size)

    def readline(self, size: int | None = None) -> bytes:
        return self._seen(self.stream.readline(), size)

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


class Drain:
    """Reads and discards the rest of a body on a thread of its own: `remaining` bytes, or
    (chunked, its length unknown) up to its end; never more than DRAIN_LIMIT."""

    def __init__(self, stream: Any, remaining: int | None) -> None:
        self.stream = stream
        self.remaining = remaining
        self.ended = False
        self.done = threading.Event()

    def run(self) -> None:
        try:
            # One byte past the limit tells a chunked body that ends there from a longer one.
            limit = DRAIN_LIMIT + 1 if self.remaining is None else self.remaining
            read = 0
            while read < limit:
                data = self.stream.read(min(CHUNK, limit - read))
                if not data:  # its end (or the connection's: then nothing is kept anyway)
                    self.ended = True
                    break
                read += len(data)
            else:
                self.ended = self.remaining is not None
        finally:
            _draining.release()
            self.done.set()

    def finished_in_time(self) -> bool:
        return self.done.wait(DRAIN_DEADLINE) and self.ended


def has_body(environ: dict[str, Any]) -> bool:
    return environ.get("CONTENT_LENGTH", "") not in ("", "0") or "HTTP_TRANSFER_ENCODING" in environ


def declared_length(environ: dict[str, Any]) -> int | None:
    """Content-Length, or None for a chunked body (granian refuses a request with both)."""
    if "HTTP_TRANSFER_ENCODING" in environ:
        return None
    try:
        return int(environ["CONTENT_LENGTH"])
    except ValueError:
        return None


def unread_rest_drained(environ: dict[str, Any], counted: CountingInput) -> bool:
    """Whether the connection can carry the next request: nothing of the body is left
    unread, or the rest was read within the bounds."""
    length = declared_length(environ)
    remaining = None if length is None else length - counted.read_bytes
    if counted.ended or remaining == 0:
        return True
    if remaining is not None and remaining > DRAIN_LIMIT:
        return False
    if not _draining.acquire(blocking=False):
        return False
    drain = Drain(counted.stream, remaining)
    threading.Thread(target=drain.run, name="drain-body", daemon=True).start()
    return drain.finished_in_time()


class EarlyAnswers:
    """The WSGI application `application`, its early answers ending cleanly (above)."""

    def __init__(self, application: WSGIApplication) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if not has_body(environ):  # a GET's way: nothing added
            return self.application(environ, start_response)
        counted = CountingInput(environ["wsgi.input"])
        environ["wsgi.input"] = counted
        started: list[Any] = []

        def hold(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers, exc_info]
            return self.no_write

        body = self.application(environ, hold)
        status, headers, exc_info = started
        if not unread_rest_drained(environ, counted):
            headers = [*headers, ("Connection", "close")]
        start_response(status, headers, exc_info)
        return body

    @staticmethod
    def no_write(data: bytes) -> None:
        """PEP 3333's `write()`, which Django never calls: the answer waits for the body."""
        raise NotImplementedError("write() is not supported: return the body instead")
