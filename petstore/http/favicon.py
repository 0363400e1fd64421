"""`/favicon.ico`, which browsers ask for on every page that links no icon (the admin, the
JSON endpoints). The pages of base.html link the SVG; this answers with the same icon as an
ICO, from the static files (a hashed name in production), so no page logs a 404."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

ICON = "petstore/favicon.ico"


@require_GET
@cache_control(max_age=86400)  # not permanent: the hashed name changes with the icon
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    return HttpResponseRedirect(static(ICON))
