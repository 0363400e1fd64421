"""Small template helpers of the domains dashboard."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from domains.presenters import ACTION_LABELS, BADGE_LABELS, STATE_HELP

register = template.Library()


@register.simple_tag
def state_badge(state: str):
    """A coloured badge with the state's word and, on hover, what it means."""
    return format_html(
        '<span class="badge badge-{}" title="{}" data-state="{}">{}</span>',
        state,
        STATE_HELP.get(state, ""),
        state,
        BADGE_LABELS.get(state, state),
    )


@register.filter
def actor_name(user) -> str:
    return user.get_username() if user else "system"


@register.filter
def action_label(action: str) -> str:
    return ACTION_LABELS.get(action, action.replace("_", " ").capitalize())
