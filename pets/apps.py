from django.apps import AppConfig
from django.conf import settings

from petstore.http import lean


class PetsConfig(AppConfig):
    name = "pets"
    verbose_name = "Pets API"

    def ready(self) -> None:
        # listPets and createPet (their URL name in pets/api/urls.py) without the middleware
        # no API response needs, under the fast paths' switch (pets/api/hotpath.py,
        # pets/api/createpath.py): off, Django's full handler serves them as any request.
        lean.register("pets", lambda: settings.API_LIST_FAST_PATH, methods=("GET", "POST"))
