"""Sign-in limits, the proxies trusted for the client's address, TLS and cookies, and the
largest body read (production values unless DEBUG)."""

from __future__ import annotations

from petstore.env import Section
from petstore.settings.core import DEBUG

env = Section("Security")
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed sign-ins (petstore/http/signin.py, django-axes), on the dashboard's and the admin's
# form: allowed per (username, address), per address and per username (from any address),
# counted within SIGNIN_WINDOW seconds of the latest failure.
SIGNIN_MAX_ATTEMPTS = env.integer(
    "SIGNIN_MAX_ATTEMPTS", 5, "Failed sign-ins allowed per (address, username) within the window."
)
SIGNIN_MAX_ATTEMPTS_PER_ADDRESS = env.integer(
    "SIGNIN_MAX_ATTEMPTS_PER_ADDRESS",
    20,
    "Failed sign-ins allowed per address within the window, whatever the username.",
)
SIGNIN_MAX_ATTEMPTS_PER_USERNAME = env.integer(
    "SIGNIN_MAX_ATTEMPTS_PER_USERNAME",
    50,
    "Failed sign-ins allowed per username from any address within the window.",
)
SIGNIN_WINDOW = env.integer(
    "SIGNIN_WINDOW", 15 * 60, "Seconds failed sign-ins are counted, from the latest one."
)
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
# The immediate peer (REMOTE_ADDR) must be in these for its X-Forwarded-* headers to count
# (petstore/http/forwarded.py); from any other peer the headers are dropped.
TRUSTED_PROXIES = env.networks(
    "TRUSTED_PROXIES",
    "127.0.0.0/8,::1",
    "The proxies whose `X-Forwarded-For` and `-Proto` count: addresses or networks the "
    "connection's peer must be in (default: this host's loopback, the edge); empty: none.",
    example="127.0.0.0/8,::1",
)
NUM_PROXIES = env.integer(
    "NUM_PROXIES",
    0,
    "How many proxies in front append to `X-Forwarded-For` (1 behind one load balancer); the "
    "client is the address the outermost of them saw. `0`: every client behind a proxy "
    "shares its address.",
    example="1",
)

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env.flag(
    "SESSION_COOKIE_SECURE",
    not DEBUG,
    "The session cookie only over HTTPS, named `__Host-sessionid`.",
    shown="on (DEBUG: off)",
)
CSRF_COOKIE_SECURE = env.flag(
    "CSRF_COOKIE_SECURE",
    not DEBUG,
    "The CSRF cookie only over HTTPS, named `__Host-csrftoken`.",
    shown="on (DEBUG: off)",
)
# The __Host- prefix binds a secure cookie to the exact host that set it: a tenant's page
# on a sibling host cannot plant or overwrite the dashboard's session (cookie tossing).
# Browsers accept the prefix only on secure cookies, so plain-HTTP development keeps the
# plain names.
SESSION_COOKIE_NAME = "__Host-sessionid" if SESSION_COOKIE_SECURE else "sessionid"
CSRF_COOKIE_NAME = "__Host-csrftoken" if CSRF_COOKIE_SECURE else "csrftoken"
# The language switch's cookie (petstore/languages.py) goes where the session's goes, with
# the same prefix, for the same reason: a tenant's host cannot choose the dashboard's language.
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_NAME = "__Host-language" if SESSION_COOKIE_SECURE else "language"
LANGUAGE_COOKIE_SAMESITE = "Lax"
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto. The probes stay on plain
# HTTP for load balancers: petstore.http.health answers them before SecurityMiddleware.
# The test suite turns the redirect off (tests/conftest.py).
SECURE_SSL_REDIRECT = env.flag(
    "SECURE_SSL_REDIRECT",
    not DEBUG,
    "Plain HTTP requests are redirected to HTTPS (the probes excepted).",
    shown="on (DEBUG: off)",
)
SECURE_HSTS_SECONDS = env.integer(
    "SECURE_HSTS_SECONDS",
    0 if DEBUG else 31536000,
    "Strict-Transport-Security's max-age.",
    shown="`31536000`, one year (DEBUG: `0`)",
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env.flag(
    "SECURE_HSTS_PRELOAD",
    not DEBUG,
    "Strict-Transport-Security asks for preloading.",
    shown="on (DEBUG: off)",
)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
DATA_UPLOAD_MAX_MEMORY_SIZE = env.integer(
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    64 * 1024,
    "Bytes of the largest request body read; a larger one is refused (the API's "
    "`payload_too_large`, 413).",
)
