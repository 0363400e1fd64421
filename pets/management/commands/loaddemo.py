from django.conf import settings
from django.core.management.base import BaseCommand

from pets.services import demo_categories_load


class Command(BaseCommand):
    help = "Load the demo pet categories (ids 1, 2, 3, ...). Safe to run again."

    def handle(self, *args, **options):
        for category, created in demo_categories_load():
            state = "created" if created else "exists"
            self.stdout.write(f"Category {category.pk} {category.name}: {state}")
        self.stdout.write(
            "Get an API key with: python manage.py createapikey USERNAME (it prints the key "
            "once, last)\n"
            f"then: curl -H 'Authorization: Bearer <key>' {settings.API_BASE_URL}/pets"
        )
