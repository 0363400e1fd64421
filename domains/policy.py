"""The platform's policy for custom domains: quotas, windows, leases, backoffs and limits.

What the platform allows and how long it waits, written once; the enumerations these are
about (plans, states, event types) are domains/choices.py's. A value that depends on a
setting is a function, read when it is called, so a changed setting (pytest-django's
`settings` fixture, an operator's environment) is seen everywhere at once; nothing here
is computed from settings at import.

Imports only the settings and domains.choices (tests/repository/test_architecture.py): models,
services and everything else read this module, never the other way round.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings

from domains.choices import Plan

# Custom domains (claims, whatever their state) one project of each plan may hold.
PLAN_DOMAIN_QUOTA: dict[str, int] = {
    Plan.FREE: 0,
    Plan.PRO: 10,
    Plan.BUSINESS: 50,
    Plan.ENTERPRISE: 250,
}

# Project slugs that can never name a project: <slug>.PLATFORM_DOMAIN is public, and
# these are names people trust to be the platform's own.
RESERVED_PROJECT_SLUGS = frozenset(
    {
        "www", "api", "admin", "dashboard", "domains", "mail", "email", "smtp", "imap",
        "pop", "ftp", "ns", "ns1", "ns2", "dns", "mx", "cdn", "static", "assets", "media",
        "status", "help", "support", "docs", "blog", "billing", "account", "accounts",
        "login", "auth", "sso", "oauth", "app", "apps", "staging", "dev", "test", "beta",
        "internal", "ca", "acme", "security", "abuse", "postmaster", "hostmaster",
        "webmaster", "root", "localhost",
    }
)  # fmt: skip


# --- The domain doctor (domains/dns/doctor.py) ---

# A zone's NS records and its name servers' addresses are the tenant's to write, and the
# doctor asks each server it takes directly: without a cap, one Verify of a zone with five
# NS names of 400 silent addresses each sent 3,000 questions. The caps are the resolvers'
# own against the same amplification (NXNSAttack, 2020): BIND looks up the addresses of at
# most 5 names of an NS set once 4 lookups have failed (NS_RR_LIMIT, NS_FAIL_LIMIT), Unbound
# and Knot Resolver give up after 5 names without an address (MAX_TARGET_NX,
# KR_COUNT_NO_NSADDR_LIMIT), and Knot Resolver tries at most 3 addresses of one server at a
# time (KR_NSREP_MAXADDR). So: the first 5 names of the NS set (sorted, so a diagnosis is
# the same from one check to the next), each at most 2 addresses, one of each family first
# (the IPv4 and the IPv6 address a dual-stack resolver chooses between). The ones left out
# are named in a finding of their own (nameservers_unasked).
DOCTOR_NAMESERVERS = 5
DOCTOR_ADDRESSES_PER_NAMESERVER = 2
# The doctor's questions of one domain in flight at once (lookups.Group.in_flight): all of
# one zone's (5 servers x 2 addresses) at once, never the whole of a batch's 100 slots, so
# one tenant's silent servers leave the other domains of a sweep batch their turns.
DOCTOR_IN_FLIGHT = DOCTOR_NAMESERVERS * DOCTOR_ADDRESSES_PER_NAMESERVER
# Names between a host name and its registrable domain asked at most, the nearest ones
# (its closest enclosing zone for the doctor, its CAA records for issuance): a host name
# deeper than this is not a real one, and each name is a question a hostile name server
# could hold until the deadline.
NAMES_BELOW_REGISTRABLE = 10


# --- Checks of a claim that does not verify yet (domains/services/failures.py) ---


def delays(*seconds: int) -> tuple[timedelta, ...]:
    """A backoff table, the delay before each retry in turn, from seconds: every table of
    this module is written in this one form."""
    return tuple(timedelta(seconds=value) for value in seconds)


# Re-check schedule for a domain that does not verify yet: the delay after the
# n-th failed check (then the last value for the rest of the window).
CHECK_BACKOFF = delays(60, 120, 300, 600, 900, 1800, 3600)


def backoff_delay(failed_checks: int) -> timedelta:
    """The wait before the next check after `failed_checks` failed ones (CHECK_BACKOFF)."""
    return CHECK_BACKOFF[min(max(failed_checks, 1), len(CHECK_BACKOFF)) - 1]


def verify_window() -> timedelta:
    """How long a new claim has to verify before it fails (DOMAINS_VERIFY_WINDOW hours)."""
    return timedelta(hours=settings.DOMAINS_VERIFY_WINDOW)


def temporary_failure_limit() -> timedelta:
    """How long temporary DNS failures of a live domain may last before they count as
    failures (DOMAINS_TEMPORARY_FAILURE_LIMIT hours)."""
    return timedelta(hours=settings.DOMAINS_TEMPORARY_FAILURE_LIMIT)


# --- The sweep (domains/services/scheduling.py) and late certificate work ---

# The sweep runs every DOMAINS_SWEEP_INTERVAL seconds with nobody waiting. Its claim on a
# due check lasts at least this many sweeps before the check is due again (a lost batch is
# simply swept again), and certificate work is taken for lost only after as many, so the
# sweep does not queue again, each minute, work still under way (an ACME order being
# validated, a task waiting out its retry).
SWEEPS_BEFORE_AGAIN = 5


def sweep_lease() -> timedelta:
    """How long a claim on a check lasts: SWEEPS_BEFORE_AGAIN sweeps, and never less than
    the longest a task may run (CELERY_TASK_TIME_LIMIT, when the worker kills it) and one
    sweep more. Each check takes it again when it starts (domains/services/verification.py),
    so a check still running, however long it waited in the queue, is never claimed again."""
    sweep = timedelta(seconds=settings.DOMAINS_SWEEP_INTERVAL)
    longest_task = timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return max(SWEEPS_BEFORE_AGAIN * sweep, longest_task + sweep)


# How long a run keeps asking the database to store an order the CA has just placed: a
# restart's crash recovery (about 4 s in the cluster test) and more. Past it, the order stays
# at the CA unfinished, and the next run places another.
PLACED_ORDER_STORED_WITHIN = timedelta(seconds=10)


def longest_issuance() -> timedelta:
    """About the longest one domain's certificate run takes: its CAA climb (one DNS
    lifetime) and, at each ACME CA in order, the wait for its validation and for its
    signature (DOMAINS_ACME_WAIT each) and for the database to store the order it placed
    (PLACED_ORDER_STORED_WITHIN), after a wildcard's DNS-01 records are served
    (DOMAINS_DNS01_WAIT)."""
    per_ca = 2 * settings.DOMAINS_ACME_WAIT + PLACED_ORDER_STORED_WITHIN.total_seconds()
    if settings.DOMAINS_DNS01_SERVER:
        per_ca += settings.DOMAINS_DNS01_WAIT
    cas = len(settings.DOMAINS_ACME_DIRECTORIES) if settings.DOMAINS_CA == "acme" else 0
    return timedelta(seconds=settings.DOMAINS_DNS_LIFETIME + cas * per_ca)


def cert_lost_at_sweep() -> timedelta:
    """Certificate work still not done this long after its issue delay
    (DOMAINS_CERT_ISSUE_DELAY) is taken for lost by the sweep, and claimed and queued again:
    SWEEPS_BEFORE_AGAIN sweeps, and never less than the longest a run may take and a sweep
    more, counted from when the last run on the domain started (each run takes the claim
    again when it starts, domains/services/certificates.py). Work under way, however long its
    batch waited, is so not joined by a second run, which would place a second ACME order
    (issuing twice is safe: the row is locked and its state read again, so two runs make one
    certificate; but an order placed in vain counts against the CA's limits)."""
    sweep = timedelta(seconds=settings.DOMAINS_SWEEP_INTERVAL)
    return max(SWEEPS_BEFORE_AGAIN * sweep, longest_issuance() + sweep)


# A check that passes while the domain is issuing (the owner chose Re-verify and waits)
# takes its certificate work for late this long after the issue delay, and asks again.
CERT_LATE_AT_CHECK = timedelta(minutes=1)


# --- Renewal (domains/services/certificates.py) ---

# When the CA suggests no renewal window (ACME Renewal Information, RFC 9773; the local CA
# never does), a certificate is renewed two thirds into its own validity (60 of 90 days,
# as Let's Encrypt advises), made earlier by a random part of its validity up to this
# fraction (3 days of 90): certificates issued together (a batch, the hour after a CA's
# outage) do not all renew in the same minute, and none later than two thirds.
RENEWAL_SPREAD = 1 / 30


def renewal_time(not_before: datetime, not_after: datetime) -> datetime:
    """When to renew a certificate valid from `not_before` to `not_after`, lacking the CA's
    window: two thirds into its validity, less a random part of up to RENEWAL_SPREAD."""
    validity = not_after - not_before
    early = random.uniform(0, RENEWAL_SPREAD)  # noqa: S311 (spread, not secrecy)
    return not_before + validity * 2 / 3 - validity * early


# A renewal asks the CA that issued the certificate it replaces first, and waits out that
# CA's rate limit (its Retry-After) only while the certificate would still have this long
# left after it: PetstoreCertificatesExpiringSoon fires at 21 days. Past that it asks the
# next CA (domains/services/fallback.py).
RENEWAL_KEEPS_LEFT = timedelta(days=21)


# A CA that suggests renewal windows may move one earlier (RFC 9773 §4.3.2: before it
# revokes certificates, say), so the hourly renewal run reads the window of each current
# certificate again when the CA's Retry-After says, at most this many certificates a run
# (the rest the next hour), and after a failed read this long later.
RENEWAL_INFO_PER_RUN = 500
RENEWAL_INFO_RETRY = timedelta(hours=1)
# However much later the CA says to ask again (RFC 9773 §4.3.3 clamps its Retry-After).
RENEWAL_INFO_AT_MOST = timedelta(days=1)


# --- Retries of the certificate and check tasks (domains/tasks.py) ---

# Delays before the n-th retry of a task whose work failed for now (a DNS lookup that timed
# out, a CA not done yet or unreachable, a challenge the CA could not fetch from us); past
# the last the sweep takes the work up again.
TASK_RETRY_BACKOFF = delays(10, 30, 90, 270, 810)
# Each delay is stretched by up to this fraction of itself, at random: after a CA outage
# the tasks that failed together must not all ask again in the same second.
RETRY_JITTER = 0.5


def jittered(delay: timedelta) -> timedelta:
    """`delay` stretched by a random part of itself, up to RETRY_JITTER: never sooner than
    asked (a CA's Retry-After stays a floor), never in lockstep."""
    return delay * (1 + random.uniform(0, RETRY_JITTER))  # noqa: S311 (spread, not secrecy)


def task_retry_delay(retries: int, *, at_least: float = 0.0) -> timedelta:
    """The wait before retry number `retries` + 1 (TASK_RETRY_BACKOFF, the last for any
    further one), not shorter than `at_least` seconds (the CA's Retry-After), jittered."""
    step = TASK_RETRY_BACKOFF[min(retries, len(TASK_RETRY_BACKOFF) - 1)]
    return jittered(max(step, timedelta(seconds=at_least)))


# --- Owner events (domains/services/events.py, domains/channels/email.py) ---

# Events of one project are collected this long before they go out as one message.
DIGEST_WINDOW = timedelta(minutes=2)
# The same event type for the same domain reaches the owner at most once in this long.
EVENT_REPEAT_AFTER = timedelta(days=1)


# --- The owner's address (domains/services/notifications.py) ---

# A confirmation link for a new address works this long.
EMAIL_CONFIRMATION_MAX_AGE = timedelta(days=2)
# Confirmation mails one user may have sent in an hour: the form mails any address typed.
EMAIL_CONFIRMATIONS_PER_HOUR = 5


# --- Deliveries of owner events (domains/channels/) ---

# Delays before the n-th retry of a webhook delivery: the first within a minute, then
# longer, about a day in all (18 h); after the last one the delivery fails.
WEBHOOK_RETRY_BACKOFF = delays(30, 120, 600, 1800, 7200, 18_000, 36_000)
# An endpoint whose attempts have all failed this long is disabled and its owner mailed.
WEBHOOK_DISABLE_AFTER = timedelta(days=3)
# Delays before the n-th retry of an owner's mail (an SMTP server that refused or was down).
EMAIL_RETRY_BACKOFF = delays(60, 300, 900, 3600, 10_800)


# --- Members and invitations (domains/services/members.py) ---

# How long an invitation's link works: a week, as GitHub's and Vercel's invitations.
INVITATION_VALID = timedelta(days=7)
# Invitations one project may send per hour (petstore/ratelimits.py's fixed window): each is
# a mail to an address the inviter typed, so a stolen session or key cannot make the
# platform a spam cannon.
INVITATIONS_PER_HOUR = 20

# --- API keys that end (domains/services/keys.py) ---

# The projects a key reaches are told this long before it ends (the key.expiring event),
# once per key.
KEY_EXPIRY_NOTICE = timedelta(days=7)
# Keys told about per run of the hourly task: a backlog is worked off over the next runs.
KEY_EXPIRY_NOTICES_PER_RUN = 500
