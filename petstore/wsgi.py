import os

import django

from petstore.http.lean import LeanWSGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
# As django.core.wsgi.get_wsgi_application, with Django's handler subclassed for the GETs
# an app registers with petstore.http.lean.
django.setup(set_prefix=False)
application = LeanWSGIHandler()
