"""The web processes' server, configured here and nowhere else: granian, in WSGI mode, serving
`petstore.wsgi:served` (the application, its early answers ending cleanly on kept-alive
connections: petstore/http/earlyanswers.py).

    python -m petstore.webserver

`make run` (petstore/Procfile), `Procfile.production`, compose.yaml, the image, the
production block (docs/operators/production.md) and the tests all start the web processes
with that line; what differs between them is the environment, read once at start through
the settings (their section "The web processes": WEB_BIND, PORT, WEB_CONCURRENCY,
WEB_THREADS, WEB_HEADER_TIMEOUT, WEB_GRACEFUL_TIMEOUT, WEB_ACCESS_LOG; docs/configuration.md).
Production's line sets WEB_ACCESS_LOG=0 itself: there the edge writes the access lines.

Signals to the main process: SIGTERM or SIGINT stop it gracefully; SIGHUP replaces the
workers one at a time, each new one started before the old one is stopped gracefully (a
graceful restart: after a deploy, the new workers run the new code, as each is a new
interpreter). A worker that dies is started again. Keep-alive is on: the edge reuses its
connections to the web processes. A slow client still holds a thread while its body trickles
in (granian hands the application the body as it arrives): the edge buffers whole requests
before it passes them on, as it did for gunicorn's sync workers (docs/decisions/serving.md).

Log lines, access lines included, go through the settings' LOGGING (LOG_FORMAT: plain or
JSON, one record a line whatever a client puts in its path). The access line carries the
request's `X-Request-Id` header, the id the application then uses, or `-` when the request
came without one (the application made its own, returned in the response's header; behind the
edge every request comes with one).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import sys
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from granian import Granian
from granian.constants import HTTPModes, Interfaces
from granian.http import HTTP1Settings
from granian.server import MPServer, MTServer

APPLICATION = "petstore.wsgi:served"
ACCESS_LOG_FORMAT = (
    '%(addr)s "%(method)s %(path)s %(protocol)s" %(status)d %(dt_ms).1fms '
    'query="%(query_string)s" id=%(header{x-request-id})s'
)


def available_cores() -> int:
    """The CPUs this process may run on (a container's or a taskset's, not the host's)."""
    return len(os.sched_getaffinity(0))


@dataclass(frozen=True)
class WebServerConfig:
    bind: str
    port: int
    workers: int
    threads: int
    header_timeout: int
    graceful_timeout: int
    access_log: bool

    @classmethod
    def from_settings(cls) -> WebServerConfig:
        config = cls(
            bind=settings.WEB_BIND,
            port=settings.PORT,
            # 0: one per CPU this process may run on, and one more.
            workers=settings.WEB_CONCURRENCY or available_cores() + 1,
            threads=settings.WEB_THREADS,
            header_timeout=settings.WEB_HEADER_TIMEOUT,
            graceful_timeout=settings.WEB_GRACEFUL_TIMEOUT,
            access_log=settings.WEB_ACCESS_LOG,
        )
        for name, value in (
            ("PORT", config.port),
            ("WEB_CONCURRENCY", config.workers),
            ("WEB_THREADS", config.threads),
            ("WEB_HEADER_TIMEOUT", config.header_timeout),
            ("WEB_GRACEFUL_TIMEOUT", config.graceful_timeout),
        ):
            if value < 1:
                raise ImproperlyConfigured(f"{name} must be at least 1, got {value}")
        return config


def logging_config(django_logging: dict[str, Any]) -> dict[str, Any]:
    """The settings' LOGGING, with granian's access lines through the same handler. Its own
    lines (start, workers spawned and stopped) reach the root logger, hence the same handler."""
    config = copy.deepcopy(django_logging)
    config["loggers"] = {
        **config.get("loggers", {}),
        "granian.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    }
    return config


def build(
    config: WebServerConfig, django_logging: dict[str, Any], application: str = APPLICATION
) -> MPServer | MTServer:
    """`Granian` is the one of the two this interpreter runs (processes; threads without a GIL).
    Another `application` is served exactly so (the benchmark's raw WSGI floor)."""
    return Granian(
        application,
        address=config.bind,
        port=config.port,
        interface=Interfaces.WSGI,
        # HTTP/1.1 from the edge (and the load balancer's probes); no upgrade to sniff for.
        http=HTTPModes.http1,
        websockets=False,
        workers=config.workers,
        blocking_threads=config.threads,
        http1_settings=HTTP1Settings(
            header_read_timeout=config.header_timeout * 1000, keep_alive=True
        ),
        respawn_failed_workers=True,
        workers_kill_timeout=config.graceful_timeout,
        log_dictconfig=logging_config(django_logging),
        log_access=config.access_log,
        log_access_format=ACCESS_LOG_FORMAT,
    )


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
    try:
        # The settings first: they read PETSTORE_ENV_FILE into the environment (`make run`'s
        # var/local.env may move PORT), and a setting that cannot be parsed stops here, once,
        # rather than in every worker in turn.
        django_logging = settings.LOGGING
        config = WebServerConfig.from_settings()
    except ImproperlyConfigured as exc:
        sys.exit(f"web server: {exc}")
    # Each worker a new interpreter: after a SIGHUP the new workers import the code as it is
    # on disk now, none of it inherited from this process.
    multiprocessing.set_start_method("spawn")
    build(config, django_logging).serve()


if __name__ == "__main__":
    main()
