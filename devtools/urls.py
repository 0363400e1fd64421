"""The root URL conf under DEBUG (petstore/settings/core.py picks it): the platform's own
(petstore/urls.py) and `make run`'s development pages under `/dev/` (devtools/views.py).
Production never names this module, and its package does not ship it."""

from django.urls import include, path, re_path

from devtools import views
from devtools.webhookreceiver import RECEIVER_NAME
from petstore.urls import handler400, handler404, handler500
from petstore.urls import urlpatterns as platform

development = [
    path("mail/", views.mail_list, name="mail"),
    path("mail/<str:name>/", views.mail_detail, name="mail_detail"),
    path("mail/<str:name>/html/", views.mail_html, name="mail_html"),
    re_path(rf"^webhooks/(?P<name>{RECEIVER_NAME})/$", views.webhook_receiver, name="webhooks"),
    re_path(
        rf"^webhooks/(?P<name>{RECEIVER_NAME})/secret/$",
        views.webhook_secret,
        name="webhook_secret",
    ),
]

urlpatterns = [path("dev/", include((development, "devtools"))), *platform]
__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]
