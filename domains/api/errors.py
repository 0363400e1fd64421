"""The HTTP status of each refusal code of the domain services: the table the platform's
refusal mechanism (petstore.api.refusals) answers the domains API's refusals with.

The services raise django.core.exceptions.ValidationError with a sentence and a `code`
(the dashboard shows the sentence, the commands print it). Here each code gets its HTTP
status, once: 400 when the name or value sent is not valid, 409 when it conflicts with
what exists now (retrying later or changing something else may succeed), 429 when the
project has used its allowance of Add domain, Verify, refused webhook URLs or Redeliver,
422 when it is well-formed but a rule of the project refuses it; 403 when the caller's role
may not touch the member's role; 404 for a member gone meanwhile; 503 when the mail an
invitation is cannot be sent.
tests/domains/api/test_refusals.py keeps this table in step with every code the services
raise (`test_every_refusal_code_of_the_services_has_a_status_and_is_documented`).
"""

from __future__ import annotations

from rest_framework import status

from domains.choices import NameCode
from petstore.api.refusals import Refusals

BAD = status.HTTP_400_BAD_REQUEST
CONFLICT = status.HTTP_409_CONFLICT
UNPROCESSABLE = status.HTTP_422_UNPROCESSABLE_ENTITY
TOO_MANY = status.HTTP_429_TOO_MANY_REQUESTS
FORBIDDEN = status.HTTP_403_FORBIDDEN
NOT_FOUND = status.HTTP_404_NOT_FOUND
# An upstream the platform relays through (the mail server) refused: not our outage.
BAD_GATEWAY = status.HTTP_502_BAD_GATEWAY

REFUSAL_STATUS: dict[str, int] = {
    # The host name typed is not one a project may add (domains/dns/hostnames.py).
    "required": BAD,
    "too_long": BAD,
    "label_too_long": BAD,
    "wildcard": BAD,
    "ip_literal": BAD,
    "invalid_hostname": BAD,
    "platform_domain": BAD,
    "public_suffix": BAD,
    # A name the public DNS cannot resolve (domains.choices.NameCode), a domain's or a webhook's.
    NameCode.SPECIAL_USE: BAD,
    NameCode.NOT_PUBLIC: BAD,
    "invalid_status": BAD,
    # A webhook's URL or events (domains/webhooks/address.py, services/webhooks.py).
    "webhook_url": BAD,
    "webhook_scheme": BAD,
    "webhook_port": BAD,
    "webhook_unresolvable": BAD,
    "webhook_address": BAD,
    "webhook_platform": BAD,
    "webhook_events": BAD,
    "unknown_event_type": BAD,
    # An invitation's address or role (domains/services/members.py).
    "invalid_email": BAD,
    "email_too_long": BAD,
    "invalid_role": BAD,
    # A member or invitation gone since the caller read it (a concurrent change).
    "no_member": NOT_FOUND,
    "no_invitation": NOT_FOUND,
    # The caller's role may not give, change or take away this role (domains.access.manages).
    "role_not_allowed": FORBIDDEN,
    # In conflict with what the project holds now.
    "duplicate": CONFLICT,
    "duplicate_from": CONFLICT,
    "quota_reached": CONFLICT,
    "check_in_progress": CONFLICT,
    "cooldown": CONFLICT,
    "readd_cooldown": CONFLICT,
    "redirect_loop": CONFLICT,
    "primary_redirects": CONFLICT,
    "webhook_limit": CONFLICT,
    "webhook_disabled": CONFLICT,
    "last_owner": CONFLICT,
    "already_member": CONFLICT,
    # The project's hourly allowance (DOMAINS_ADD_PER_HOUR, DOMAINS_VERIFY_PER_HOUR) is used.
    "add_limit": TOO_MANY,
    "verify_limit": TOO_MANY,
    # Its webhook URLs refused this hour, its Redelivers this minute (webhooks/limits.py).
    "webhook_create_limit": TOO_MANY,
    "webhook_redeliver_limit": TOO_MANY,
    # Its invitations this hour (domains.policy.INVITATIONS_PER_HOUR).
    "invite_limit": TOO_MANY,
    # The mail server refused the invitation's mail: nothing was kept, try again later.
    "invitation_not_sent": BAD_GATEWAY,
    # Well-formed, refused by a rule of the project or the domain.
    "plan_required": UNPROCESSABLE,
    "deploy_required": UNPROCESSABLE,
    "target_not_live": UNPROCESSABLE,
    "not_owned": UNPROCESSABLE,
}
# A code not listed answers 422.
REFUSALS = Refusals(REFUSAL_STATUS, default=UNPROCESSABLE)
