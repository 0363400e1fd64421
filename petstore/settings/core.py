"""The service itself: development or production, its secret, its hosts, apps, pages and
files, and the web processes' server (petstore/webserver.py)."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section, env_str, load_env_file
from petstore.ports import DEFAULT_PORT

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = Section("Core")
# A file of development settings, read only when PETSTORE_ENV_FILE names one (`make run`
# passes var/local.env); the environment wins. Production names none, so a checkout where
# `make run` was used never lends its DEBUG=1 to the web server or Celery.
env.declare(
    "PETSTORE_ENV_FILE",
    "A `NAME=value` file read at start-up (the environment wins), relative to the checkout; "
    "`make run` passes `var/local.env`, production names none.",
    "empty",
)
load_env_file(env_str("PETSTORE_ENV_FILE"), base_dir=BASE_DIR)
# Files of this installation (the embedded servers' data, the local CA, ...). Importing the
# settings creates nothing: each directory is made by what writes into it (`make run` makes
# this one, collectstatic STATIC_ROOT).
VAR_DIR = Path(
    env.text(
        "PETSTORE_VAR_DIR",
        str(BASE_DIR / "var"),
        "Local state: the embedded servers' data and sockets, beat's last tick, static files.",
        shown="`var/` in the checkout",
    )
)


def embedded_sockets(var_dir: Path) -> Path:
    """Where the embedded PostgreSQL and Redis listen: `var_dir/run`, or, where that path is
    too long for a unix socket (107 bytes with PostgreSQL's file name), a folder in the
    system's temporary directory named after `var_dir`."""
    sockets = var_dir / "run"
    if len(str(sockets / ".s.PGSQL.5432").encode()) <= 100:
        return sockets
    digest = hashlib.sha256(str(var_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"petstore-{digest}"


# The embedded servers (`make run`): PostgreSQL's data, and both servers' sockets.
EMBEDDED_POSTGRES_DIR = VAR_DIR / "postgres"
EMBEDDED_SOCKETS = embedded_sockets(VAR_DIR)
EMBEDDED_DATABASE = "petstore"

DEBUG = env.flag(
    "DEBUG",
    False,
    "Development mode (`make run` turns it on); with it off, `SECRET_KEY` is required.",
    example="0",
)
# Production refuses to start without a secret; only DEBUG may fall back to a
# development key, which is useless anywhere else.
SECRET_KEY = env.text(
    "SECRET_KEY",
    "",
    "Signs sessions and paging cursors; required with DEBUG off (50 random characters: "
    "`python3 -c 'import secrets; print(secrets.token_urlsafe(50))'`).",
    shown="none (required)",
    example="",
    secret=True,
)
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (development: run `make run` once, "
            "then export PETSTORE_ENV_FILE=var/local.env; see docs/getting-started.md)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY_FALLBACKS = env.list(
    "SECRET_KEY_FALLBACKS",
    "",
    "Rotation: the keys `SECRET_KEY` replaced, comma-separated; what they signed stays valid "
    "until they are dropped (docs/operators/keys.md).",
    secret=True,
)

ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS",
    "*" if DEBUG else "",
    "The app's own host names, comma-separated (custom domains are matched by the domains "
    "middleware; `/healthz` and `/readyz` answer on any Host).",
    shown="`*` under DEBUG, else empty",
    example="app.petstore.example",
)
CSRF_TRUSTED_ORIGINS = env.list(
    "CSRF_TRUSTED_ORIGINS",
    "",
    "Origins allowed to POST forms (`https://app.petstore.example`), when the proxy changes "
    "the Host the app sees.",
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",  # failed sign-ins: petstore/http/signin.py
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "petstore.apikeys",
    "pets",
    "domains",
    "petstore",  # operations: task failure counts (petstore/models.py)
]
if DEBUG:  # `make run`'s DNS server and demo commands; production never installs them
    INSTALLED_APPS.append("devtools")

MIDDLEWARE = [
    # First: X-Forwarded-* headers from a peer outside TRUSTED_PROXIES are dropped before
    # anything reads them (is_secure(), the client address of the sign-in and API limits).
    "petstore.http.forwarded.ForwardedHeadersMiddleware",
    # Counts every answer, whichever middleware below gave it (petstore/metrics/http.py).
    "petstore.metrics.http.RequestMetricsMiddleware",
    "petstore.http.requestid.RequestIDMiddleware",
    # GET /metrics with its token, on any Host (a scraper asks each process by address).
    "petstore.metrics.endpoint.MetricsEndpointMiddleware",
    # /healthz and /readyz on any Host (a load balancer probes by IP), before host checks.
    "petstore.http.health.ProbeMiddleware",
    # Next: answers platform subdomains and custom domains by their raw Host header.
    "domains.routing.middleware.HostRoutingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # RateLimit-Policy and RateLimit on every /v1 answer, errors included (the API's own host).
    "petstore.api.ratelimitheaders.RateLimitHeadersMiddleware",
    # Content-Security-Policy on HTML pages (dashboard, sign-in, admin, Swagger UI).
    "petstore.http.csp.ContentSecurityPolicyMiddleware",
    # Static files (admin, dashboard, the offline Swagger UI) from the app itself.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the switch's cookie, else Accept-Language, else LANGUAGE_CODE
    # (petstore/languages.py); the API's is always LANGUAGE_CODE (petstore/api/language.py).
    # After the session, before anything that renders.
    "petstore.api.language.PageLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who makes the request's changes, for the audit log (petstore/actors.py).
    "petstore.actors.ActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A page whose database did not answer: 503 with Retry-After (petstore/http/unavailable.py).
    "petstore.http.unavailable.DatabaseUnavailableMiddleware",
    # Last: turns a locked-out sign-in into the form with its message (a 429).
    "axes.middleware.AxesMiddleware",
]

# Under DEBUG the root URL conf adds `make run`'s development pages (`/dev/mail/`, the
# webhook receiver) to the platform's: devtools/urls.py. Production's is petstore/urls.py alone.
ROOT_URLCONF = "devtools.urls" if DEBUG else "petstore.urls"
WSGI_APPLICATION = "petstore.wsgi.application"
ASGI_APPLICATION = "petstore.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/dashboard/"
LOGOUT_REDIRECT_URL = "login"

# The languages the dashboard, the sign-in pages and owner mail are written in, English
# first (every msgid is English); each other one has a complete catalogue in LOCALE_PATHS
# (locale/<code>/LC_MESSAGES/django.po, its compiled .mo beside it: docs/contributors/
# translations.md). The API stays English: its codes are for programs.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The switch's choice, for a year (its cookie's name and flags: security.py); the account
# keeps its own too (petstore/languages.py).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
# Each language's way of writing a date (petstore/formats/: English keeps ISO 8601's order).
FORMAT_MODULE_PATH = ["petstore.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# Served by WhiteNoise. In production from `collectstatic`'s output: names carry a hash of
# the content (cached for a year) and gzip/brotli copies sit beside them; without a
# collectstatic run the pages cannot name their files and fail. Under DEBUG (`make run`)
# straight from the apps (finders), under their plain names, so nothing needs collecting.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# --- The web processes (petstore/webserver.py: granian, read once at its start) --------

web = Section("The web processes")
PORT = web.integer(
    "PORT",
    DEFAULT_PORT,
    "The port the web processes listen on; under DEBUG also the port redirects name.",
    example=str(DEFAULT_PORT),
)
WEB_BIND = web.text(
    "WEB_BIND",
    "127.0.0.1",
    "The address the web processes listen on: loopback, where only the edge on this host "
    "reaches them; a container or a host behind a remote edge binds the address its proxy "
    "reaches, with `TRUSTED_PROXIES` naming that proxy.",
)
WEB_CONCURRENCY = web.integer(
    "WEB_CONCURRENCY",
    0,
    "Web worker processes; 0: one per CPU the process may use, and one more.",
    shown="`0` (the CPUs it may use + 1)",
)
WEB_THREADS = web.integer(
    "WEB_THREADS",
    1,
    "Threads per web worker that run the app, each with a database connection of its own "
    "(connections, keep-alive and headers are served apart and hold none).",
)
WEB_HEADER_TIMEOUT = web.integer(
    "WEB_HEADER_TIMEOUT", 10, "Seconds a client has to send a request's headers."
)
WEB_GRACEFUL_TIMEOUT = web.integer(
    "WEB_GRACEFUL_TIMEOUT",
    30,
    "Seconds a stopping web worker (SIGTERM, or replaced after SIGHUP) has to finish its "
    "requests before it is killed.",
)
WEB_ACCESS_LOG = web.flag(
    "WEB_ACCESS_LOG",
    True,
    "One access line per request (with its `X-Request-Id`); production's web line turns it "
    "off, as the edge writes every request's line.",
    shown="on; off in production's web line",
)
