"""The app's URLs plus the floors, mounted only for the benchmark."""

from django.urls import path

from bench import floor
from petstore.urls import urlpatterns as app_urlpatterns

urlpatterns = [
    path("bench/floor", floor.pets_floor),
    path("bench/trivial-open", floor.TrivialOpen.as_view()),
    path("bench/trivial-auth", floor.TrivialAuthenticated.as_view()),
    *app_urlpatterns,
]
