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
        self.fields["redirect_to"].queryset = self.project.domains.exclude(pk=domain.pk).order_by(
            "hostname"
        )
