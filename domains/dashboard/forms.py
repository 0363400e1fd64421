"""Dashboard forms: they shape input only. The rules (name validity, plan,
deploy, domain taken) live in domains/services.py; a view passes a service's
ValidationError back into the form with `form.add_error`."""

from __future__ import annotations

from django import forms

REDIRECT_STATUSES = [
    (301, "301 Moved Permanently"),
    (302, "302 Found (temporary)"),
    (307, "307 Temporary Redirect"),
    (308, "308 Permanent Redirect"),
]


class DomainAddForm(forms.Form):
    hostname = forms.CharField(
        label="Domain or subdomain",
        max_length=253,
        strip=True,
        help_text="For example shop.example.com or example.com.",
        widget=forms.TextInput(
            attrs={"placeholder": "shop.example.com", "autocomplete": "off", "spellcheck": "false"}
        ),
    )


class _ProjectDomainsForm(forms.Form):
    """A form whose domain choices are the given project's domains only."""

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        domains = project.domains.order_by("hostname")
        for field in self.fields.values():
            if isinstance(field, forms.ModelChoiceField):
                field.queryset = domains
                field.label_from_instance = lambda domain: domain.hostname_unicode


class PrimaryForm(_ProjectDomainsForm):
    domain = forms.ModelChoiceField(
        queryset=None,
        required=False,
        label="Primary domain",
        empty_label="None: the platform subdomain",
    )


class RedirectForm(_ProjectDomainsForm):
    from_domain = forms.ModelChoiceField(queryset=None, label="From")
    to_domain = forms.ModelChoiceField(queryset=None, label="To")
    status = forms.TypedChoiceField(
        choices=REDIRECT_STATUSES, coerce=int, initial=301, label="Status"
    )


class RemoveForm(_ProjectDomainsForm):
    """The confirmation of Remove; the optional target offers a redirect instead."""

    redirect_to = forms.ModelChoiceField(queryset=None, required=False, label="Redirect to")

    def __init__(self, *args, domain, **kwargs):
        super().__init__(*args, **kwargs)
        others = self.project.domains.exclude(pk=domain.pk).order_by("hostname")
        field = self.fields["redirect_to"]
        field.queryset = others
        # Offer the primary domain first, else the first other domain.
        primary = self.project.primary_domain_id
        field.initial = primary if primary and primary != domain.pk else others.first()
        field.empty_label = None

    @property
    def redirect_instead(self) -> bool:
        return "redirect_instead" in self.data

    def clean(self):
        data = super().clean()
        if self.redirect_instead and not data.get("redirect_to"):
            raise forms.ValidationError("Choose the domain to redirect to.")
        return data
