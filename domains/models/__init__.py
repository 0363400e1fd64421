"""Projects, their deploys, custom domains, redirects, certificates and events.

One module per subject; every model is imported here, so Django finds them all and
`from domains.models import Domain` works wherever it is written. The rules that change
these rows live in domains/services/; the moves between a domain's states in
domains/services/lifecycle.py; every enumerated value in domains/choices.py; reusable
reads in domains/querysets.py.
"""

from domains.models.audit import ActorType, AuditEntry
from domains.models.certificates import AcmeChallenge, AcmeOrder, Certificate, PlatformKey
from domains.models.deliveries import Delivery, DeliveryAttempt
from domains.models.domains import Domain, ProvenHostname, Redirect, new_verification_token
from domains.models.events import (
    DomainEvent,
    NotificationPreference,
    OwnerEmailChange,
    OwnerEvent,
    default_email_events,
    link_digest,
    new_link_secret,
)
from domains.models.members import Invitation, Membership, ProjectKey
from domains.models.projects import Deploy, Project, validate_project_slug
from domains.models.webhooks import WebhookEndpoint

# The migrations name the three functions here (`domains.models.new_verification_token`).
__all__ = [
    "ActorType",
    "AuditEntry",
    "Invitation",
    "Membership",
    "ProjectKey",
    "AcmeChallenge",
    "AcmeOrder",
    "Certificate",
    "Delivery",
    "DeliveryAttempt",
    "Deploy",
    "Domain",
    "DomainEvent",
    "NotificationPreference",
    "OwnerEmailChange",
    "OwnerEvent",
    "PlatformKey",
    "Project",
    "ProvenHostname",
    "Redirect",
    "WebhookEndpoint",
    "default_email_events",
    "link_digest",
    "new_link_secret",
    "new_verification_token",
    "validate_project_slug",
]
