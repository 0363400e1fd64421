from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("v1/", include("pets.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("domains.urls")),
]
