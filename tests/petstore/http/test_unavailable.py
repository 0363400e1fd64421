"""A dashboard page whose database does not answer is a 503 to retry, not a server error."""

from __future__ import annotations

import logging

import pytest
from django.urls import reverse

from domains.choices import State
from domains.models import Domain
from tests.fixtures.domains import go_live
from tests.petstore.locks import locked_elsewhere


@pytest.mark.django_db(transaction=True)
def test_a_page_whose_database_does_not_answer_is_a_503_to_retry(alice_client, shop, caplog):
    caplog.set_level(logging.INFO, logger="petstore.http.unavailable")
    page = reverse("dashboard:project_domains", kwargs={"slug": shop.slug})
    with locked_elsewhere(Domain):
        response = alice_client.get(page)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"Briefly unavailable" in response.content
    assert b"Try again in 5 seconds" in response.content
    [line] = [r for r in caplog.records if r.getMessage().startswith("Database unavailable")]
    assert line.levelno == logging.ERROR and line.exc_info is None
    assert page in line.getMessage() and "lock timeout" in line.getMessage()

    assert alice_client.get(page).status_code == 200  # and the page once it answers


@pytest.mark.django_db(transaction=True)
def test_a_custom_domains_page_whose_database_does_not_answer_is_a_503_to_retry(client, www):
    """The custom domains' routing reads the domain in a middleware, before any view: Django's
    500 handler answers it, with the same 503."""
    go_live(www, State.VERIFIED)  # served over plain HTTP
    client.raise_request_exception = False  # as a server answers: what the handler made of it
    with locked_elsewhere(Domain):
        response = client.get("/", HTTP_HOST=www.hostname)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"Try again in 5 seconds" in response.content

    assert client.get("/", HTTP_HOST=www.hostname).status_code == 200  # once it answers
