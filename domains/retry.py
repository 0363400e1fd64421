"""What a temporary failure raises, wherever it happens: try again later.

The certificate authority that is not done yet (`pki.Pending`) and the CAA
lookup that timed out (`certificates.TemporaryDNSError`) both raise a
`RetryLater`, so a task retries them the same way (domains/tasks.py) and a
command reports them the same way. It lives here, under both domains.pki and
domains.services, and imports nothing.
"""

from __future__ import annotations


class RetryLater(Exception):
    """A temporary failure: ask again, not sooner than `retry_after` seconds from now
    (0: whenever the caller's own backoff says)."""

    def __init__(self, message: str, *, retry_after: float = 0.0):
        super().__init__(message)
        self.retry_after = retry_after
