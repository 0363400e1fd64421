"""Dashboard forms: they shape input only. The rules (name validity, plan,
deploy, domain taken) live in domains/services/; a view passes a service's
ValidationError back into the form with `form.add_error`."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.db.models import QuerySet
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from domains.choices import LIVE_STATES, EventType, RedirectStatus
from domains.dns import hostnames
from domains.models import Domain, Project
from domains.webhooks.address import HTTPS_PORTS
from petstore.apikeys.models import DEFAULT_KEY_DAYS, MAX_KEY_DAYS
from petstore.apikeys.scopes import Scope
from petstore.http.reauth import CurrentPasswordForm


class DomainAddForm(forms.Form):
    hostname = forms.CharField(
        label=_("Domain or subdomain"),
        max_length=hostnames.MAX_HOSTNAME_LENGTH,
        error_messages={"max_length": hostnames.TOO_LONG_MESSAGE},
        strip=True,
        help_text=_("For example shop.example.com or example.com."),
        widget=forms.TextInput(
            attrs={"placeholder": "shop.example.com", "autocomplete": "off", "spellcheck": "false"}
        ),
    )


class DomainChoiceField(forms.ModelChoiceField):
    """One of a project's domains, shown by its Unicode name."""

    def label_from_instance(self, obj: Domain) -> str:
        return obj.hostname_unicode


class ProjectChoiceField(forms.ModelChoiceField):
    """One of the user's projects, shown by its name as the pages' headings show it."""

    def label_from_instance(self, obj: Project) -> str:
        return obj.name or obj.slug


class _ProjectDomainsForm(forms.Form):
    """A form whose domain choices are the given project's domains only."""

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        choices = self.domain_choices()
        for field in self.fields.values():
            if isinstance(field, DomainChoiceField):
                field.queryset = choices

    def domain_choices(self) -> QuerySet[Domain]:
        return self.project.domains.order_by("hostname")


class PrimaryForm(_ProjectDomainsForm):
    domain = DomainChoiceField(
        queryset=Domain.objects.none(),
        required=False,
        label=_("Primary domain"),
        empty_label=_("None: the platform subdomain"),
    )


class RedirectForm(_ProjectDomainsForm):
    from_domain = DomainChoiceField(queryset=Domain.objects.none(), label=_("From"))
    to_domain = DomainChoiceField(queryset=Domain.objects.none(), label=_("To"))
    status = forms.TypedChoiceField(
        choices=RedirectStatus.choices,
        coerce=int,
        initial=RedirectStatus.MOVED_PERMANENTLY,
        label=_("Status"),
    )


class RemoveForm(_ProjectDomainsForm):
    """The confirmation of Remove; the optional target offers a redirect instead."""

    redirect_to = DomainChoiceField(
        queryset=Domain.objects.none(), required=False, empty_label=None, label=_("Redirect to")
    )

    def __init__(self, *args: Any, project: Project, domain: Domain, **kwargs: Any) -> None:
        self.domain = domain  # read by domain_choices, which the base __init__ calls
        super().__init__(*args, project=project, **kwargs)
        # Offer the primary domain first, else the first other domain.
        primary = project.primary_domain_id
        self.fields["redirect_to"].initial = (
            primary if primary and primary != domain.pk else self.domain_choices().first()
        )

    def domain_choices(self) -> QuerySet[Domain]:
        # A redirect may only point at a live domain of the project.
        return super().domain_choices().exclude(pk=self.domain.pk).filter(state__in=LIVE_STATES)

    @property
    def can_redirect_instead(self) -> bool:
        """Any other live domain of the project can take the visitors: one that redirects
        here gives that redirect up, and takes over as the primary where this one was it
        (domains.services.redirects.redirect_instead_of_removal)."""
        return self.domain_choices().exists()

    @property
    def redirect_instead(self) -> bool:
        return "redirect_instead" in self.data

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if self.redirect_instead and not self.cleaned_data.get("redirect_to"):
            raise forms.ValidationError(_("Choose the domain to redirect to."))
        return data


class NotificationsForm(forms.Form):
    email_events = forms.MultipleChoiceField(
        label=_("Email me about"),
        choices=EventType.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Several events of one project within two minutes arrive as one mail; the "
            "same event for the same domain at most once a day."
        ),
    )


class OwnerEmailForm(CurrentPasswordForm):
    """Settings → Account: the address owner mail should go to (the service checks it),
    and the current password unless it was typed within the re-authentication window."""

    field_order = ["email", "current_password"]

    email = forms.CharField(
        label=_("New address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        help_text=_("A link goes to this address; owner mail goes there once you open it."),
    )


class WebhookForm(forms.Form):
    """Add a webhook endpoint: the URL is checked by the service (the address guard)."""

    project = ProjectChoiceField(queryset=Project.objects.none(), empty_label=None)
    url = forms.CharField(label=_("Endpoint URL"), max_length=2000)
    events = forms.MultipleChoiceField(
        label=_("Send"),
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Each event is POSTed as JSON, signed per Standard Webhooks."),
    )

    def __init__(self, *args: Any, projects: QuerySet[Project], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["project"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = projects
        self.fields["url"].help_text = webhook_url_help()


def webhook_url_help() -> str:
    """Which URLs the address guard takes, as this installation's settings say
    (domains/webhooks/address.py): public HTTPS, and on a developer's machine loopback."""
    ports = _(" or ").join(str(port) for port in sorted(HTTPS_PORTS))
    text = _("A public HTTPS URL (port %(ports)s).") % {"ports": ports}
    if settings.WEBHOOKS_ALLOW_LOOPBACK and settings.DEBUG:
        text += " " + _(
            "On this development machine http://127.0.0.1 on any port is accepted too, such "
            "as make run's receiver %(receiver)s, which shows each delivery and checks its "
            "signature."
        ) % {"receiver": f"http://127.0.0.1:{settings.HTTP_PORT}/dev/webhooks/demo/"}
    elif settings.WEBHOOKS_ALLOW_LOOPBACK:
        text += " " + _("On this development machine http://127.0.0.1 on any port is accepted too.")
    return text


class ApiKeyForm(forms.Form):
    """Settings → API keys: a new key of the user's. Its scopes are checked against their
    role by the service (domains/services/keys.py); the boxes offered are those their roles
    allow on some project."""

    name = forms.CharField(label=_("Name"), max_length=100, help_text=_("What the key is for."))
    project = ProjectChoiceField(
        queryset=Project.objects.none(),
        required=False,
        empty_label=_("All my projects"),
        help_text=_("A key limited to one project reaches no other."),
    )
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"),
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Never more than your role allows on the project, at the moment of each request."
        ),
    )
    days = forms.IntegerField(
        label=_("Expires in (days)"),
        min_value=1,
        max_value=MAX_KEY_DAYS,
        initial=DEFAULT_KEY_DAYS,
        help_text=format_lazy(_("At most {days} days."), days=MAX_KEY_DAYS),
    )

    def __init__(
        self, *args: Any, projects: QuerySet[Project], offered: frozenset[str], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        project = self.fields["project"]
        assert isinstance(project, forms.ModelChoiceField)
        project.queryset = projects
        scopes = self.fields["scopes"]
        assert isinstance(scopes, forms.MultipleChoiceField)
        scopes.choices = [(value, label) for value, label in Scope.choices if value in offered]
        # Least privilege first: the reading scopes are ticked until the user chooses.
        scopes.initial = sorted(value for value in offered if value.endswith(":read"))
