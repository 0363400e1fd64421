from django.urls import path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from pets.api import views
from petstore.api.errors import unknown_path

urlpatterns = [
    path("pets", views.PetsView.as_view(), name="pets"),
    # Any single segment, so that a bad id is still a deprecated getPet 404 (with its
    # headers); the view checks that it is an int64.
    path("pets/<str:petId>", views.PetDetailView.as_view(), name="pet-detail"),
    path("categories", views.CategoriesView.as_view(), name="categories"),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="api-docs"),
    # Last: any other path under /v1 is a 404 with the Error body (DEBUG or not).
    re_path(r"^.*$", unknown_path),
]
