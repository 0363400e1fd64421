"""Small template helpers of the domains dashboard."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from domains.choices import STATE_HELP, Action, State

register = template.Library()


@register.simple_tag
def state_badge(state: str):
    """A coloured badge with the state's word and, on hover, what it means."""
    return format_html(
        '<span class="badge badge-{}" title="{}" data-state="{}">{}</span>',
        state,
        STATE_HELP.get(state, ""),
        state,
        State(state).label if state in State.values else state,
    )


@register.filter
def actor_name(user) -> str:
    return user.get_username() if user else "system"


@register.filter
def action_label(action: str) -> str:
    if action in Action.values:
        return Action(action).label
    return action.replace("_", " ").capitalize()
