"""The domains dashboard: server-rendered screens under /dashboard/.

Projects are addressed by slug and domains by their ASCII host name, so a URL
reads like what it shows: /dashboard/projects/shop/domains/www.example.com/.
"""

from django.urls import path
from django.views.generic import RedirectView

from domains.dashboard import views

app_name = "dashboard"

_project = "dashboard/projects/<slug:slug>/"
_domain = _project + "domains/<str:hostname>/"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="dashboard:home", permanent=False)),
    path("dashboard/", views.home, name="home"),
    path(
        "dashboard/settings/notifications/",
        views.notification_settings,
        name="notification_settings",
    ),
    path(_project + "domains/", views.project_domains, name="project_domains"),
    path(_project + "domains.json", views.project_structure, name="project_structure"),
    path(_project + "domains/add/", views.domain_add, name="domain_add"),
    path(_project + "primary/", views.primary_set, name="primary_set"),
    path(_project + "redirects/add/", views.redirect_add, name="redirect_add"),
    path(_project + "redirects/<int:pk>/edit/", views.redirect_edit, name="redirect_edit"),
    path(_project + "redirects/<int:pk>/delete/", views.redirect_delete, name="redirect_delete"),
    path(_domain, views.domain_detail, name="domain_detail"),
    path(_domain + "status.json", views.domain_status, name="domain_status"),
    path(_domain + "verify/", views.domain_verify, name="domain_verify"),
    path(_domain + "remove/", views.domain_remove, name="domain_remove"),
]
