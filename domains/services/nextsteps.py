"""What a service asks to happen after its transaction: services never queue work
themselves; the caller hands this to domains.tasks.enqueue."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NextSteps:
    # Domains whose check is due (the sweep's claims), checked in batches.
    checks: list[int] = field(default_factory=list)
    # Certificates just requested: issued after the CA's delay (DOMAINS_CERT_ISSUE_DELAY).
    issue: list[int] = field(default_factory=list)
    # Certificate work that is overdue (a lost task): issued again at once.
    issue_now: list[int] = field(default_factory=list)
    # Deliveries made due now (Redeliver): (channel name, delivery id), attempted at once.
    deliveries: list[tuple[str, int]] = field(default_factory=list)

    def __iadd__(self, other: NextSteps) -> NextSteps:
        self.checks += other.checks
        self.issue += other.issue
        self.issue_now += other.issue_now
        self.deliveries += other.deliveries
        return self
