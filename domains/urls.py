"""The domains dashboard: server-rendered screens under /dashboard/.

Projects are addressed by slug and domains by their ASCII host name, so a URL
reads like what it shows: /dashboard/projects/shop/domains/www.example.com/.
"""

from django.urls import path
from django.views.generic import RedirectView

from domains.dashboard import account, audit, keys, members, views, webhooks

app_name = "dashboard"

_project = "dashboard/projects/<slug:slug>/"
_domain = _project + "domains/<str:hostname>/"
_webhooks = "dashboard/settings/notifications/webhooks/"
_keys = "dashboard/settings/api-keys/"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="dashboard:home", permanent=False)),
    path("dashboard/", views.home, name="home"),
    path(
        "dashboard/settings/notifications/",
        views.notification_settings,
        name="notification_settings",
    ),
    path("dashboard/settings/account/", account.account, name="account"),
    path(
        # The signed link mailed to a new address (domains/services/notifications.py).
        "dashboard/settings/account/confirm/<str:token>/",
        account.account_confirm,
        name="account_confirm",
    ),
    path("dashboard/settings/api-keys/", keys.api_keys, name="api_keys"),
    path(
        "dashboard/settings/api-keys/<int:pk>/revoke/", keys.api_key_revoke, name="api_key_revoke"
    ),
    path(_webhooks + "add/", webhooks.webhook_add, name="webhook_add"),
    path(_webhooks + "<int:pk>/", webhooks.webhook_detail, name="webhook_detail"),
    path(_webhooks + "<int:pk>/rotate/", webhooks.webhook_rotate, name="webhook_rotate"),
    path(_webhooks + "<int:pk>/secret/", webhooks.webhook_secret, name="webhook_secret"),
    path(_webhooks + "<int:pk>/delete/", webhooks.webhook_delete, name="webhook_delete"),
    path(
        _webhooks + "<int:pk>/deliveries/<int:delivery_pk>/redeliver/",
        webhooks.webhook_redeliver,
        name="webhook_redeliver",
    ),
    path(_project + "domains/", views.project_domains, name="project_domains"),
    path(_project + "audit-log/", audit.audit_log, name="audit_log"),
    path(_project + "domains.json", views.project_structure, name="project_structure"),
    path(_project + "domains/add/", views.domain_add, name="domain_add"),
    path(_project + "primary/", views.primary_set, name="primary_set"),
    path(_project + "redirects/add/", views.redirect_add, name="redirect_add"),
    path(_project + "redirects/<int:pk>/edit/", views.redirect_edit, name="redirect_edit"),
    path(_project + "redirects/<int:pk>/delete/", views.redirect_delete, name="redirect_delete"),
    path(_project + "members/", members.members_page, name="members"),
    path(_project + "members/invite/", members.member_invite, name="member_invite"),
    path(_project + "members/<int:pk>/role/", members.member_role, name="member_role"),
    path(_project + "members/<int:pk>/remove/", members.member_remove, name="member_remove"),
    path(
        _project + "invitations/<int:pk>/revoke/",
        members.invitation_revoke,
        name="invitation_revoke",
    ),
    path(_project + "owner/transfer/", members.ownership_transfer, name="ownership_transfer"),
    path(_project + "members/leave/", members.member_leave, name="member_leave"),
    # The link mailed to an invitee (domains/services/members.py): open without signing in.
    path("dashboard/invitations/<str:token>/", members.invitation, name="invitation"),
    path(_domain, views.domain_detail, name="domain_detail"),
    path(_domain + "status.json", views.domain_status, name="domain_status"),
    path(_domain + "verify/", views.domain_verify, name="domain_verify"),
    path(_domain + "remove/", views.domain_remove, name="domain_remove"),
]
