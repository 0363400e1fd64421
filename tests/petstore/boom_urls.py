from django.http import HttpRequest, HttpResponse
from django.urls import path

from petstore.urls import handler404, handler500
from petstore.urls import urlpatterns as production


class Boom(Exception):
    pass


def boom(request: HttpRequest) -> HttpResponse:
    raise Boom("a view error for the error reports")


urlpatterns = [path("boom/", boom), *production]
__all__ = ["handler404", "handler500", "urlpatterns"]
