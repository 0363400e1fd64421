"""The pets API's routes, under /v1 (petstore/api/urls.py)."""

from django.urls import path

from pets.api import views

urlpatterns = [
    path("pets", views.PetsView.as_view(), name="pets"),
    # Any single segment, so that a bad id is still a deprecated getPet 404 (with its
    # headers); the view checks that it is an int64.
    path("pets/<str:petId>", views.PetDetailView.as_view(), name="pet-detail"),
    path("categories", views.CategoriesView.as_view(), name="categories"),
]
