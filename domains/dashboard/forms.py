"""Dashboard forms: they shape input only. The rules (name validity, plan,
deploy, domain taken) live in domains/services/; a view passes a service's
ValidationError back into the form with `form.add_error`."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from domains.choices import LIVE_STATES, EventType, RedirectStatus
from domains.dns import hostnames
from domains.models import Domain, Project
from petstore.http.reauth import CurrentPasswordForm


class DomainAddForm(forms.Form):
    hostname = forms.CharField(
        label="Domain or subdomain",
        max_length=hostnames.MAX_HOSTNAME_LENGTH,
        error_messages={"max_length": hostnames.TOO_LONG_MESSAGE},
        strip=True,
        help_text="For example shop.example.com or example.com.",
        widget=forms.TextInput(
            attrs={"placeholder": "shop.example.com", "autocomplete": "off", "spellcheck": "false"}
        ),
    )


class DomainChoiceField(forms.ModelChoiceField):
    """One of a project's domains, shown by its Unicode name."""

    def label_from_instance(self, obj: Domain) -> str:
        return obj.hostname_unicode


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
        label="Primary domain",
        empty_label="None: the platform subdomain",
    )


class RedirectForm(_ProjectDomainsForm):
    from_domain = DomainChoiceField(queryset=Domain.objects.none(), label="From")
    to_domain = DomainChoiceField(queryset=Domain.objects.none(), label="To")
    status = forms.TypedChoiceField(
        choices=RedirectStatus.choices,
        coerce=int,
        initial=RedirectStatus.MOVED_PERMANENTLY,
        label="Status",
    )


class RemoveForm(_ProjectDomainsForm):
    """The confirmation of Remove; the optional target offers a redirect instead."""

    redirect_to = DomainChoiceField(
        queryset=Domain.objects.none(), required=False, empty_label=None, label="Redirect to"
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
        """The primary domain cannot redirect away, and a redirect needs a live target."""
        is_primary = self.project.primary_domain_id == self.domain.pk
        return not is_primary and self.domain_choices().exists()

    @property
    def redirect_instead(self) -> bool:
        return "redirect_instead" in self.data

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if self.redirect_instead and not self.cleaned_data.get("redirect_to"):
            raise forms.ValidationError("Choose the domain to redirect to.")
        return data


class NotificationsForm(forms.Form):
    email_events = forms.MultipleChoiceField(
        label="Email me about",
        choices=EventType.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Several events of one project within two minutes arrive as one mail; the "
        "same event for the same domain at most once a day.",
    )


class OwnerEmailForm(CurrentPasswordForm):
    """Settings → Account: the address owner mail should go to (the service checks it),
    and the current password unless it was typed within the re-authentication window."""

    field_order = ["email", "current_password"]

    email = forms.CharField(
        label="New address",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        help_text="A link goes to this address; owner mail goes there once you open it.",
    )


class WebhookForm(forms.Form):
    """Add a webhook endpoint: the URL is checked by the service (the address guard)."""

    project = forms.ModelChoiceField(queryset=Project.objects.none(), empty_label=None)
    url = forms.CharField(label="Endpoint URL", max_length=2000)
    events = forms.MultipleChoiceField(
        label="Send",
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="Each event is POSTed as JSON, signed per Standard Webhooks.",
    )

    def __init__(self, *args: Any, projects: QuerySet[Project], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["project"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = projects
