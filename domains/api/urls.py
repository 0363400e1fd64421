"""The domains API's routes, under /v1 (petstore/api/urls.py)."""

from django.urls import path

from domains.api import audit, members, views, webhooks

urlpatterns = [
    path("projects", views.ProjectsView.as_view(), name="api-projects"),
    path("projects/<str:slug>/domains", views.DomainsView.as_view(), name="api-domains"),
    path(
        "projects/<str:slug>/domains/<str:hostname>",
        views.DomainDetailView.as_view(),
        name="api-domain",
    ),
    path(
        "projects/<str:slug>/domains/<str:hostname>/verify",
        views.DomainVerifyView.as_view(),
        name="api-domain-verify",
    ),
    path(
        "projects/<str:slug>/primary-domain",
        views.PrimaryDomainView.as_view(),
        name="api-primary-domain",
    ),
    path("projects/<str:slug>/redirects", views.RedirectsView.as_view(), name="api-redirects"),
    path(
        # Any segment: the view answers a bad id with the same 404 as an unknown one.
        "projects/<str:slug>/redirects/<str:id>",
        views.RedirectDetailView.as_view(),
        name="api-redirect",
    ),
    path("projects/<str:slug>/webhooks", webhooks.WebhooksView.as_view(), name="api-webhooks"),
    path(
        # Any segment: the view answers a bad id with the same 404 as an unknown one.
        "projects/<str:slug>/webhooks/<str:id>",
        webhooks.WebhookDetailView.as_view(),
        name="api-webhook",
    ),
    path(
        "projects/<str:slug>/webhooks/<str:id>/deliveries",
        webhooks.WebhookDeliveriesView.as_view(),
        name="api-webhook-deliveries",
    ),
    path("projects/<str:slug>/audit-log", audit.AuditLogView.as_view(), name="api-audit-log"),
    path("projects/<str:slug>/members", members.MembersView.as_view(), name="api-members"),
    path(
        # `mem_<n>` or `inv_<n>`; anything else is the same 404 as an unknown id.
        "projects/<str:slug>/members/<str:id>",
        members.MemberDetailView.as_view(),
        name="api-member",
    ),
]
