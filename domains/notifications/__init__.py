"""Telling owners: the email channel over the owner-event outbox (domains.models.OwnerEvent).

The services write the events (domains/services/events.py); this package only reads them
and sends. It imports domains' models and choices, never the other way round: only
domains.tasks calls it.
"""
