"""Settings for the Petstore service: one file, driven by the environment.

PostgreSQL and Redis everywhere. With no DATABASE_URL and REDIS_URL they are the embedded
servers of this installation, on unix sockets in PETSTORE_VAR_DIR, which `make run` starts
(devtools/embedded.py); production names its own. There is no other code path.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import quote

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from petstore.env import (
    email_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_str,
    load_env_file,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# A file of development settings, read only when PETSTORE_ENV_FILE names one (`make run`
# passes var/local.env); the environment wins. Production names none, so a checkout where
# `make run` was used never lends its DEBUG=1 to the web server or Celery.
load_env_file(env_str("PETSTORE_ENV_FILE"), base_dir=BASE_DIR)
# Files of this installation (the embedded servers' data, the local CA, ...). Importing the
# settings creates nothing: each directory is made by what writes into it (`make run` makes
# this one, collectstatic STATIC_ROOT).
VAR_DIR = Path(env_str("PETSTORE_VAR_DIR", str(BASE_DIR / "var")))


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

# --- Core -------------------------------------------------------------------

DEBUG = env_bool("DEBUG", False)
# Production refuses to start without a secret; only DEBUG may fall back to a
# development key, which is useless anywhere else.
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (development: run `make run` once, "
            "then export PETSTORE_ENV_FILE=var/local.env; see README, First steps)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105
# Rotation: the replaced keys, comma-separated; what they signed (sessions, paging cursors)
# stays valid until they are dropped (README, "Rotating the keys").
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "*" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

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
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A page whose database did not answer: 503 with Retry-After (petstore/http/unavailable.py).
    "petstore.http.unavailable.DatabaseUnavailableMiddleware",
    # Last: turns a locked-out sign-in into the form with its message (a 429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "petstore.urls"
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

# --- Data -------------------------------------------------------------------

# Unset: the embedded server (`make run` starts it; devtools/embedded.py).
DATABASE_URL = (
    env_str("DATABASE_URL")
    or f"postgres://postgres@{quote(str(EMBEDDED_SOCKETS), safe='')}/{EMBEDDED_DATABASE}"
)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        # Persistent, health-checked connections: a dropped connection is
        # noticed and replaced before the next request uses it.
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL must name a PostgreSQL database (postgres://...), not "
        f"{DATABASE_URL.partition(':')[0]}:; unset it to use the embedded server of `make run`"
    )
# The same backend, its health check without a round trip unless the server has written to
# the idle connection, as it does when it drops one (petstore/database/).
DATABASES["default"]["ENGINE"] = "petstore.database"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Unset: the embedded server (`make run`), its database 0 the cache, 1 the Celery broker.
EMBEDDED_REDIS_SOCKET = EMBEDDED_SOCKETS / "redis.sock"
REDIS_URL = env_str("REDIS_URL") or f"unix://{EMBEDDED_REDIS_SOCKET}?db=0"
# Seconds every Redis client waits to connect and for each answer (the cache, the broker,
# the rate limits, the API-key cache, the metrics store: petstore/redisclients.py). A hung
# Redis then costs a call this long and the caller goes on as in an outage: rate limits fail
# open, keys are looked up in the database, a task not queued is queued again by the sweep.
# A request makes at most five such calls (key, two limits, a publish tried twice): a hung
# Redis leaves it answered within 2.5 s. A healthy Redis answers in well under a millisecond.
REDIS_TIMEOUT = env_float("REDIS_TIMEOUT", 0.5)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"socket_connect_timeout": REDIS_TIMEOUT, "socket_timeout": REDIS_TIMEOUT},
    }
}

# --- Auth, i18n, static -----------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Failed sign-ins (petstore/http/signin.py, django-axes), on the dashboard's and the admin's
# form: allowed per (username, address), per address and per username (from any address),
# counted within SIGNIN_WINDOW seconds of the latest failure.
SIGNIN_MAX_ATTEMPTS = env_int("SIGNIN_MAX_ATTEMPTS", 5)
SIGNIN_MAX_ATTEMPTS_PER_ADDRESS = env_int("SIGNIN_MAX_ATTEMPTS_PER_ADDRESS", 20)
SIGNIN_MAX_ATTEMPTS_PER_USERNAME = env_int("SIGNIN_MAX_ATTEMPTS_PER_USERNAME", 50)
SIGNIN_WINDOW = env_int("SIGNIN_WINDOW", 15 * 60)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out client
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "petstore.http.signin.SignInLimits"
# The three counts, in the order of SignInLimits' limits.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address", "username"]
# Read from the SIGNIN_ settings at each sign-in, not copied here once.
AXES_FAILURE_LIMIT = "petstore.http.signin.failure_limit"
AXES_COOLOFF_TIME = "petstore.http.signin.window"
AXES_RESET_ON_SUCCESS = True  # SignInLimits: that user at that address only
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "petstore.http.clientaddress.client_address"
AXES_USERNAME_CALLABLE = "petstore.http.signin.username"
AXES_LOCKOUT_CALLABLE = "petstore.http.signin.lockout_response"
# No start-up banner in every process, and attempt log lines name only what is counted.
AXES_VERBOSE = False
# The proxies the app takes X-Forwarded-For and -Proto from: addresses or networks that the
# immediate peer (REMOTE_ADDR) must be in (petstore/http/forwarded.py); from any other peer
# the headers are dropped. Default: this host's loopback, where the edge runs.
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES", "127.0.0.0/8,::1")
# How many proxies in front of the app append to X-Forwarded-For (0: use REMOTE_ADDR); the
# client is the address the outermost of them saw.
NUM_PROXIES = env_int("NUM_PROXIES", 0)
LOGIN_REDIRECT_URL = "/dashboard/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
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

# --- Security (production values unless DEBUG) ------------------------------

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
# The __Host- prefix binds a secure cookie to the exact host that set it: a tenant's page
# on a sibling host cannot plant or overwrite the dashboard's session (cookie tossing).
# Browsers accept the prefix only on secure cookies, so plain-HTTP development keeps the
# plain names.
SESSION_COOKIE_NAME = "__Host-sessionid" if SESSION_COOKIE_SECURE else "sessionid"
CSRF_COOKIE_NAME = "__Host-csrftoken" if CSRF_COOKIE_SECURE else "csrftoken"
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto. The probes stay on plain
# HTTP for load balancers: petstore.http.health answers them before SecurityMiddleware.
# The test suite turns the redirect off (tests/conftest.py).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 64 * 1024)

# --- API --------------------------------------------------------------------

# The OpenAPI document's first server; under DEBUG (`make run`) on the port it serves on.
API_BASE_URL = env_str(
    "API_BASE_URL", f"http://localhost:{env_int('PORT', 8000) if DEBUG else 8000}/v1"
)
API_STAGING_BASE_URL = env_str("API_STAGING_BASE_URL", "https://staging.petstore.example/v1")

# Requests per API key (DRF rate syntax, e.g. "600/min"); empty turns it off.
API_RATE_LIMIT = env_str("API_RATE_LIMIT", "600/min")
# Requests per client address (petstore.http.clientaddress.client_address, see NUM_PROXIES),
# whatever key they carry; empty turns it off. Both limits fail open if the cache is down.
API_ADDRESS_RATE_LIMIT = env_str("API_ADDRESS_RATE_LIMIT", "3000/min")
# listPets through its speed-ups (pets/api/hotpath.py), tested equal to stock DRF; off: stock DRF.
API_LIST_FAST_PATH = env_bool("API_LIST_FAST_PATH", True)
# Pages of listPets each web process keeps (at most ~8 KB each) while no pet changes, read at
# start; 0 (the default) keeps none, and every request reads its page: where pets are written
# among the reads, keeping them cost more than it saved (docs/decisions/performance.md).
API_LIST_PAGES_KEPT = env_int("API_LIST_PAGES_KEPT", 0)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["petstore.api.renderers.ORJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["petstore.api.parsers.JSONParser"],
    # Secure by default: every DRF view needs a bearer API key unless it opts out.
    "DEFAULT_AUTHENTICATION_CLASSES": ["petstore.api.authentication.BearerKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [
        "petstore.api.throttles.KeyThrottle",
        "petstore.api.throttles.AddressThrottle",
    ],
    "EXCEPTION_HANDLER": "petstore.api.errors.exception_handler",
    "URL_FORMAT_OVERRIDE": None,  # `?format=` is an ordinary (ignored) parameter
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Petstore API",
    "VERSION": "1.0.0",
    "DESCRIPTION": (
        "The v1 animal-store API. Every operation needs `Authorization: Bearer <key>`; "
        "every error is the Error body `{code, message, status}`."
    ),
    "SCHEMA_PATH_PREFIX": r"/v1",
    "SCHEMA_PATH_PREFIX_TRIM": True,  # paths are relative to the servers' /v1
    "PREPROCESSING_HOOKS": ["petstore.api.openapi.only_v1_endpoints"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "pets.api.openapi.name_pets_array",
        "petstore.api.openapi.servers_from_settings",  # API_BASE_URL, API_STAGING_BASE_URL
        "petstore.api.openapi.service_unavailable",  # a 503 on every operation
        "petstore.api.openapi.rate_limit_headers",  # on every response
    ],
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "ENUM_NAME_OVERRIDES": {
        "PetStatus": "pets.models.PetStatus",
        "ErrorCode": "petstore.api.exceptions.ErrorCode",
        "EventTypeEnum": "domains.choices.EventType",
        "WebhookDeliveryStateEnum": "domains.choices.DeliveryState",
        "DomainStateEnum": "domains.choices.State",
    },
    "COMPONENT_NO_READ_ONLY_REQUIRED": False,
    # The document and the docs page are public: no key, no throttle.
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
}

# --- Celery -----------------------------------------------------------------

# Unset: the embedded Redis's database 1 (kombu's name for a unix socket) when REDIS_URL is
# unset too, else REDIS_URL itself.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or (
    REDIS_URL if env_str("REDIS_URL") else f"redis+socket://{EMBEDDED_REDIS_SOCKET}?virtual_host=1"
)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "socket_connect_timeout": REDIS_TIMEOUT,
    "socket_timeout": REDIS_TIMEOUT,
}
# One retry of a publish that failed: a pooled connection that a restarted Redis closed is
# opened again; a Redis that does not answer costs two REDIS_TIMEOUTs, and the sweep queues
# the work later (petstore/queueing.py). Celery's default (3 retries) would hold a request 4.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 240)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's consumer, kept alive when a broker restart finds it holding unacknowledged
# messages (petstore/brokerloss.py).
CELERY_WORKER_CONSUMER = "petstore.brokerloss:Consumer"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Two queues, so a slow DNS check never sits in front of certificate work: `checks` (the
# checks, the sweep, and anything not routed) and `certificates` (issuance and renewal).
# Production runs one worker per queue (Procfile.production); a worker started without
# -Q consumes both (CELERY_TASK_QUEUES).
CHECKS_QUEUE = "checks"
CERTIFICATES_QUEUE = "certificates"
# Webhook deliveries wait on tenants' receivers (WEBHOOKS_TIMEOUT each): a queue and a
# worker of their own, so a slow receiver never delays a check or a certificate.
WEBHOOKS_QUEUE = "webhooks"
CELERY_TASK_DEFAULT_QUEUE = CHECKS_QUEUE
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {
    CHECKS_QUEUE: {},
    CERTIFICATES_QUEUE: {},
    WEBHOOKS_QUEUE: {},
}
CELERY_TASK_ROUTES = {
    "domains.tasks.check_domain": {"queue": CHECKS_QUEUE},
    "domains.tasks.check_domains": {"queue": CHECKS_QUEUE},
    "domains.tasks.sweep": {"queue": CHECKS_QUEUE},
    "domains.tasks.issue_certificate": {"queue": CERTIFICATES_QUEUE},
    "domains.tasks.issue_certificates": {"queue": CERTIFICATES_QUEUE},
    "domains.tasks.renew_certificate": {"queue": CERTIFICATES_QUEUE},
    "domains.tasks.renew_certificates": {"queue": CERTIFICATES_QUEUE},
    # domains.tasks.deliver is queued on its channel's queue (webhooks: WEBHOOKS_QUEUE).
    "domains.tasks.dispatch_webhooks": {"queue": WEBHOOKS_QUEUE},
    "domains.tasks.deliver_webhook": {"queue": WEBHOOKS_QUEUE},
}
# Seconds between two sweeps (domains/services/scheduling.py). Its lease on a claimed check,
# and the time after which certificate work counts as lost, are counted in sweeps
# (domains/policy.py: SWEEPS_BEFORE_AGAIN, 5 minutes by default). Shorter only where
# minutes matter more than repeated work (the cluster test).
DOMAINS_SWEEP_INTERVAL = env_float("DOMAINS_SWEEP_INTERVAL", 60.0)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, str | float]] = {
    # Idempotency-Key records (every /v1 resource's) live 24 hours; purge the expired ones
    # hourly. The entry and the task keep their pets names (petstore/tasks.py).
    "pets-purge-idempotency-keys": {
        "task": "pets.tasks.purge_expired_idempotency_keys",
        "schedule": 3600.0,
    },
    # Picks every domain whose check is due, including ones whose enqueue was lost.
    "domains-sweep": {"task": "domains.tasks.sweep", "schedule": DOMAINS_SWEEP_INTERVAL},
    "domains-renew-certificates": {"task": "domains.tasks.renew_certificates", "schedule": 3600.0},
    # Queues every due delivery of every channel (domains/channels/): the mails whose digest
    # window has passed, the webhook attempts, and the retries that are due.
    "domains-dispatch-deliveries": {
        "task": "domains.tasks.dispatch_deliveries",
        "schedule": 15.0,
    },
}

# --- Webhooks ---------------------------------------------------------------
# Seconds one delivery attempt may take in all (connect, send, the answer's first bytes).
WEBHOOKS_TIMEOUT = env_float("WEBHOOKS_TIMEOUT", 5.0)
# Lets webhooks use plain http, and a loopback address any port (a developer's own
# machine); which addresses pass is OUTBOUND_ALLOWED_NETWORKS'. Never on in production.
WEBHOOKS_ALLOW_LOOPBACK = env_bool("WEBHOOKS_ALLOW_LOOPBACK", DEBUG)
# A PEM file of CAs a receiver's certificate may chain to instead of the system's (tests,
# development); empty: the system's trust store.
WEBHOOKS_CA_BUNDLE = env_str("WEBHOOKS_CA_BUNDLE")
# Seconds the URL's DNS may take when an endpoint is added (a web request waits for it;
# a delivery attempt's own DNS is bounded by WEBHOOKS_TIMEOUT).
WEBHOOKS_CREATE_DNS_DEADLINE = env_float("WEBHOOKS_CREATE_DNS_DEADLINE", 1.0)
# URLs refused at Add (an address refused, a name without an answer) per project per hour;
# past it Add is refused (429) before any DNS is asked.
WEBHOOKS_FAILED_CREATES_PER_HOUR = env_int("WEBHOOKS_FAILED_CREATES_PER_HOUR", 20)
# Attempts in flight at once toward one host name and for one project (the webhooks worker
# has 8 threads): one tenant's silent receivers hold a few of them, never all.
WEBHOOKS_IN_FLIGHT_PER_HOST = env_int("WEBHOOKS_IN_FLIGHT_PER_HOST", 2)
WEBHOOKS_IN_FLIGHT_PER_PROJECT = env_int("WEBHOOKS_IN_FLIGHT_PER_PROJECT", 3)
# Redeliver presses per project per minute.
WEBHOOKS_REDELIVER_PER_MINUTE = env_int("WEBHOOKS_REDELIVER_PER_MINUTE", 10)

# --- Email ------------------------------------------------------------------
# What owners are told (domains/channels/email.py) goes out through Django's email framework.
# EMAIL_URL: smtp://user:password@host:587/?tls=1, smtps://user:password@host:465, or
# console:// (printed). Unset: the console under DEBUG (`make run` shows the mail in its
# output), an SMTP server on localhost:25 otherwise.
_email = email_url(
    "EMAIL_URL", env_str("EMAIL_URL", "console://" if DEBUG else "smtp://localhost:25")
)
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email["EMAIL_HOST"]
EMAIL_PORT = _email["EMAIL_PORT"]
EMAIL_HOST_USER = _email["EMAIL_HOST_USER"]
EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS = _email["EMAIL_USE_TLS"]
EMAIL_USE_SSL = _email["EMAIL_USE_SSL"]
EMAIL_TIMEOUT = _email["EMAIL_TIMEOUT"]
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "noreply@petstore.localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- Domains ----------------------------------------------------------------

PLATFORM_DOMAIN = env_str("PLATFORM_DOMAIN", "petstore.localhost")
PLATFORM_CNAME_TARGET = env_str("PLATFORM_CNAME_TARGET", f"domains.{PLATFORM_DOMAIN}")
# The host the dashboard, the admin and the API answer on. Tenant pages are served under
# PLATFORM_DOMAIN, which must be a registrable domain of its own (a system check warns).
DASHBOARD_HOST = env_str("DASHBOARD_HOST", "localhost")
# The ports redirects name (never the one a Host header claims); 80 and 443 are left out.
HTTP_PORT = env_int("HTTP_PORT", env_int("PORT", 8000) if DEBUG else 80)
HTTPS_PORT = env_int("HTTPS_PORT", 443)
# The loopback DNS server of `manage.py devdns` (Procfile `dns:`), and its zone files.
DOMAINS_DEV_DNS_PORT = env_int("DOMAINS_DEV_DNS_PORT", 5353)
DOMAINS_DEV_DNS_ZONES = Path(env_str("DOMAINS_DEV_DNS_ZONES", str(VAR_DIR / "dns-zones")))
# Comma-separated host:port. Empty means the system's resolvers; under DEBUG (`make run`)
# the default is the loopback dev DNS server.
DOMAINS_DNS_NAMESERVERS = env_list(
    "DOMAINS_DNS_NAMESERVERS", f"127.0.0.1:{DOMAINS_DEV_DNS_PORT}" if DEBUG else ""
)
DOMAINS_DNS_TIMEOUT = env_float("DOMAINS_DNS_TIMEOUT", 2.0)
DOMAINS_DNS_LIFETIME = env_float("DOMAINS_DNS_LIFETIME", 5.0)
# The port a zone's own name servers are asked on, each directly (the domain doctor,
# domains/dns/doctor.py): 53 on the internet; under DEBUG the dev DNS server's, which the
# development zones name as their name server.
DOMAINS_DNS_AUTHORITATIVE_PORT = env_int(
    "DOMAINS_DNS_AUTHORITATIVE_PORT", DOMAINS_DEV_DNS_PORT if DEBUG else 53
)
# Networks the platform may reach on a tenant's say although they are not public (a
# webhook's address, a zone's name server the domain doctor asks: domains/outbound.py);
# under DEBUG the loopback ranges, where `make run`'s DNS servers and webhook receivers
# listen. Empty in production: only public addresses.
OUTBOUND_ALLOWED_NETWORKS = env_networks(
    "OUTBOUND_ALLOWED_NETWORKS", "127.0.0.0/8,::1" if DEBUG else ""
)
# Name suffixes outside the public DNS that a tenant's names (Add domain, a webhook's host,
# a zone's name servers) may end in all the same, where the platform serves the zone itself:
# `test` and `localhost` under DEBUG (`make run`'s zone, a developer's receiver). Empty in
# production: every special-use name and suffix outside the Public Suffix List's ICANN
# section is refused (domains/dns/hostnames.py).
DOMAINS_LOCAL_SUFFIXES = env_list("DOMAINS_LOCAL_SUFFIXES", "test,localhost" if DEBUG else "")
DOMAINS_CA_IDENTIFIER = env_str("DOMAINS_CA_IDENTIFIER", "ca.petstore.localhost")
DOMAINS_CERT_ISSUE_DELAY = env_float("DOMAINS_CERT_ISSUE_DELAY", 5.0)
DOMAINS_VERIFY_WINDOW = env_int("DOMAINS_VERIFY_WINDOW", 48)  # hours
DOMAINS_CA_DIR = Path(env_str("DOMAINS_CA_DIR", str(VAR_DIR / "ca")))
DOMAINS_RECHECK_INTERVAL = env_int("DOMAINS_RECHECK_INTERVAL", 6)  # hours, verified domains
DOMAINS_CERT_VALIDITY_DAYS = env_int("DOMAINS_CERT_VALIDITY_DAYS", 90)
# A live domain whose checks fail keeps serving this long after its first failed check.
DOMAINS_GRACE_HOURS = env_int("DOMAINS_GRACE_HOURS", 48)
# A live domain whose checks fail only temporarily (SERVFAIL, timeout) this many hours in a
# row counts as failing: its grace period starts (a lame delegation never answers).
DOMAINS_TEMPORARY_FAILURE_LIMIT = env_int("DOMAINS_TEMPORARY_FAILURE_LIMIT", 72)
# A claim that never verified is dropped after this many days.
DOMAINS_CLAIM_EXPIRY_DAYS = env_int("DOMAINS_CLAIM_EXPIRY_DAYS", 7)
# Seconds between two Verify / Re-verify of one domain (a queued check is never doubled).
DOMAINS_VERIFY_COOLDOWN = env_int("DOMAINS_VERIFY_COOLDOWN", 5)
# Seconds a Verify / Re-verify's check may wait for the DNS in all, not retried on a
# timeout (the sweep's backoff checks again): a name server that never answers holds a
# worker this long, no longer. A healthy answer takes milliseconds; 3 s leaves room for a
# resolver's slow first answer.
DOMAINS_VERIFY_DEADLINE = env_float("DOMAINS_VERIFY_DEADLINE", 3.0)
# Per project and per hour, counted from its Activity lines: Add domain, and Verify /
# Re-verify (staff commands are not limited).
DOMAINS_ADD_PER_HOUR = env_int("DOMAINS_ADD_PER_HOUR", 100)
DOMAINS_VERIFY_PER_HOUR = env_int("DOMAINS_VERIFY_PER_HOUR", 60)
# Seconds before a project may add again a name it removed (Remove + Add resets nothing);
# 0: off, the development default, so the walk-through can be repeated right after Remove.
DOMAINS_READD_COOLDOWN = env_int("DOMAINS_READD_COOLDOWN", 0 if DEBUG else 3600)

# --- Certificates -------------------------------------------------------------

# Which certificate authority issues: `local` (the platform's own CA under DOMAINS_CA_DIR)
# or `acme` (an RFC 8555 CA such as Let's Encrypt, at DOMAINS_ACME_DIRECTORY).
DOMAINS_CA = env_str("DOMAINS_CA", "local")
if DOMAINS_CA not in {"local", "acme"}:
    raise ImproperlyConfigured(f"DOMAINS_CA must be local or acme, not {DOMAINS_CA!r}")
DOMAINS_ACME_DIRECTORY = env_str(
    "DOMAINS_ACME_DIRECTORY", "https://acme-v02.api.letsencrypt.org/directory"
)
DOMAINS_ACME_EMAIL = env_str("DOMAINS_ACME_EMAIL", "")
# A CA file to trust the directory's HTTPS (a test CA); empty: the system's.
DOMAINS_ACME_CA_BUNDLE = env_str("DOMAINS_ACME_CA_BUNDLE", "")
# Seals private keys at rest (certificates', the local CA's and the ACME account's); never
# SECRET_KEY. Only the processes that open or seal keys hold it: the worker and the edge (and
# `resealkeys`), which refuse to start without it (domains/checks.py); the web process never
# needs it. At least 32 random bytes in urlsafe base64; `make run` writes a random one into
# var/local.env. Rotation: the new key here, the old ones in DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS
# (comma-separated; still opened, never used to seal) until `manage.py resealkeys` has run.
KEY_ENCRYPTION_KEY_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
KEY_ENCRYPTION_KEY_MIN_BYTES = 32
URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]+")


def encryption_key(name: str, value: str) -> str:
    """`value` when it is at least 32 random bytes in urlsafe base64 (or empty); the error
    never repeats it: it is a secret."""
    stripped = value.rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except ValueError:
        raw = b""
    # Bytes repeat in any 32 random ones, but fewer than half of them distinct is a pattern.
    if value and (
        not URLSAFE_BASE64.fullmatch(stripped)
        or len(raw) < KEY_ENCRYPTION_KEY_MIN_BYTES
        or len(set(raw)) < KEY_ENCRYPTION_KEY_MIN_BYTES // 2
    ):
        raise ImproperlyConfigured(
            f"{name} must be at least {KEY_ENCRYPTION_KEY_MIN_BYTES} random bytes in urlsafe "
            f"base64 (one key; older ones go in DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS); make one "
            f"with: {KEY_ENCRYPTION_KEY_RECIPE}"
        )
    return value


DOMAINS_KEY_ENCRYPTION_KEY = encryption_key(
    "DOMAINS_KEY_ENCRYPTION_KEY", env_str("DOMAINS_KEY_ENCRYPTION_KEY").strip()
)
DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS = [
    encryption_key("DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS", key)
    for key in env_list("DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS")
]

# --- The TLS edge (Caddy, domains/edge/) --------------------------------------

# The web processes the edge proxies HTTPS requests to, comma-separated host:port.
EDGE_UPSTREAMS = env_list("EDGE_UPSTREAMS", f"127.0.0.1:{HTTP_PORT}" if DEBUG else "127.0.0.1:8000")
# The loopback-only endpoint the edge asks for a certificate during each TLS handshake.
EDGE_CERTIFICATES_PORT = env_int("EDGE_CERTIFICATES_PORT", 8442)
# Caddy's admin API: a unix socket (`unix/PATH`), this checkout's by default, so two checkouts
# run side by side. Never a TCP address: it would hand any process of the host Caddy's
# configuration, with the endpoint's secret and the keys Caddy holds (domains/edge/admin.py).
EDGE_DIR = VAR_DIR / "edge"
EDGE_ADMIN = env_str("EDGE_ADMIN", f"unix/{EDGE_DIR / 'admin.sock'}")
# How many live domains' certificates Caddy holds in its memory (domains/edge/held.py), so
# their full handshakes ask nobody; the rest are asked of the certificate endpoint. 0 (the
# default): none. Each change of the set reloads Caddy, which closes every idle kept-alive
# connection (a request racing the close is lost) and parses them all again: a few thousand
# keep a Remove's certificate gone within a second (docs/decisions/edge.md).
EDGE_HELD_CERTIFICATES = env_int("EDGE_HELD_CERTIFICATES", 0)
if EDGE_HELD_CERTIFICATES < 0:
    raise ImproperlyConfigured("EDGE_HELD_CERTIFICATES must be 0 or more")
# Whether the edge also takes plain HTTP on HTTP_PORT (production: port 80, where ACME HTTP-01
# challenges arrive and browsers are sent on to https). `make run`: HTTPS_PORT only, as the web
# process itself serves HTTP on PORT.
EDGE_HTTP = env_bool("EDGE_HTTP", not DEBUG)
# The certificate (chain, PEM) and key files for the platform's own names: DASHBOARD_HOST and
# PLATFORM_DOMAIN's subdomains (a wildcard), obtained by the operator (e.g. by DNS-01). Empty:
# the edge serves custom domains only.
EDGE_PLATFORM_CERTIFICATE = env_str("EDGE_PLATFORM_CERTIFICATE", "")
EDGE_PLATFORM_KEY = env_str("EDGE_PLATFORM_KEY", "")

# --- Metrics and error reports ---------------------------------------------------

# GET /metrics (Prometheus text format) answers `Authorization: Bearer <METRICS_TOKEN>`;
# empty: the endpoint is off (petstore/metrics/endpoint.py).
METRICS_TOKEN = env_str("METRICS_TOKEN")
# Where the counters of every process add up (petstore/metrics/store.py): `redis` (REDIS_URL;
# any number of hosts) or `multiprocess` (files under METRICS_DIR; one host).
METRICS_STORE = env_str("METRICS_STORE", "redis")
if METRICS_STORE not in {"redis", "multiprocess"}:
    raise ImproperlyConfigured(
        f"METRICS_STORE must be redis or multiprocess, not {METRICS_STORE!r}"
    )
# Seconds between two pushes of a process's counts to Redis (what a killed process loses).
METRICS_FLUSH_INTERVAL = env_float("METRICS_FLUSH_INTERVAL", 5.0)
METRICS_DIR = Path(env_str("METRICS_DIR", str(VAR_DIR / "metrics")))
# prometheus-client picks its multiprocess mode from this variable when it is first
# imported, which is after the settings: the store named above decides, nothing inherited.
if METRICS_STORE == "multiprocess":
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)
else:
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
# Errors go to Sentry when set (petstore/errorreporting.py); empty: the SDK is not started.
SENTRY_DSN = env_str("SENTRY_DSN")
SENTRY_ENVIRONMENT = env_str("SENTRY_ENVIRONMENT", "development" if DEBUG else "production")

# --- Logging ----------------------------------------------------------------

# LOG_FORMAT=json gives one JSON object a line (production); plain text otherwise. The web
# process and the Celery worker (petstore/celery.py) both log through this; every line
# carries the request id of the request it serves, or of the request that queued its task.
# The edge writes the access lines in the same format (domains/edge/caddy.py).
LOG_FORMAT = env_str("LOG_FORMAT", "plain")
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "petstore.http.requestid.RequestIDFilter"}},
    "formatters": {
        "plain": {
            "class": "petstore.http.logjson.PlainFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {"()": "petstore.http.logjson.JSONFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
