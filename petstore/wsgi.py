import os

import django

from petstore.http.earlyanswers import EarlyAnswers
from petstore.http.lean import LeanWSGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
# As django.core.wsgi.get_wsgi_application, with Django's handler subclassed for the GETs
# an app registers with petstore.http.lean.
django.setup(set_prefix=False)
application = LeanWSGIHandler()
# What the web processes' server serves (petstore/webserver.py): the same application, its
# answers given before a request's body was read ending cleanly on a kept-alive connection.
# Django's own servers (WSGI_APPLICATION) get `application`: they read every body themselves.
served = EarlyAnswers(application)
