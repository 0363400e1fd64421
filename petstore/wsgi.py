import os

from django.core.wsgi import get_wsgi_application

from petstore.http.lean import LeanWSGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
# Django's handler, but for the GETs an app registers with petstore.http.lean.
application = LeanWSGIHandler(get_wsgi_application())
