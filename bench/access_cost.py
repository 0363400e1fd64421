"""What the scope and role checks cost the requests they guard, in this process's CPU:
listPets, a keyed create (createPet) and a project read (getDomain), each answered in this
process through Django's whole handler on production's settings, with the checks as they
ship and with them taken out, in alternating rounds (docs/decisions/access.md; the target:
at most 3 % more).

"Taken out" is the path before the checks existed: no scope compared (KeyScopes lets every
key through) and the project found by its owner alone (no membership join, no role, no
project-limited key). Both sides run the same requests against the same rows of a fresh
test database, so the ratio is the checks' cost and nothing else.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/access_cost.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("DOMAINS_KEY_ENCRYPTION_KEY", "dUG54qTColkumbWJlZy-kDau_kv2hzoAjGRLksx2OW4")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from domains import access  # noqa: E402
from domains.api import shortcuts  # noqa: E402
from domains.models import Project  # noqa: E402
from domains.services.custom_domains import domain_add  # noqa: E402
from domains.services.projects import deploy_record, project_create  # noqa: E402
from pets.models import Category, Pet  # noqa: E402
from petstore.api.permissions import KeyScopes  # noqa: E402
from petstore.apikeys.services import api_key_issue  # noqa: E402

HOST = "api.bench.test"


@contextlib.contextmanager
def unchecked() -> Iterator[None]:
    """The path before the checks: every key passes its scope, the project is the owner's."""

    def owners_project(request, slug):
        project = Project.objects.filter(owner=request.user, slug=slug).first()
        if project is None:
            raise shortcuts.NotFound(f"No project {slug!r}.")
        project.role = "owner"
        return project

    saved = (KeyScopes.has_permission, shortcuts.project_of, access.allows)
    KeyScopes.has_permission = lambda self, request, view: True  # type: ignore[method-assign]
    shortcuts.project_of = owners_project  # type: ignore[assignment]
    access.allows = lambda role, permission: True  # type: ignore[assignment]
    try:
        yield
    finally:
        KeyScopes.has_permission, shortcuts.project_of, access.allows = saved  # type: ignore[method-assign,assignment]


def setup() -> Client:
    user = get_user_model().objects.create_user("bench")
    project = project_create(slug="shop", owner=user, plan="pro", name="Shop")
    deploy_record(project=project, html="<h1>shop</h1>")
    domain_add(project=project, hostname="www.example.com", actor=user)
    dogs = Category.objects.create(name="Dogs")
    Pet.objects.bulk_create(
        Pet(name=f"pet {i}", category=dogs, status="available") for i in range(1_000)
    )
    client = Client(HTTP_HOST=HOST, HTTP_X_FORWARDED_PROTO="https")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {api_key_issue(user=user).plaintext}"
    return client


def operations(client: Client) -> dict[str, Callable[[], int]]:
    category = Category.objects.get(name="Dogs").pk
    body = json.dumps({"name": "Rex", "categoryId": category, "status": "available"})
    return {
        "listPets (`GET /v1/pets?limit=100`)": lambda: client.get("/v1/pets?limit=100").status_code,
        "createPet (`POST /v1/pets`)": lambda: (
            client.post("/v1/pets", body, content_type="application/json").status_code
        ),
        "getDomain (`GET /v1/projects/shop/domains/www.example.com`)": lambda: (
            client.get("/v1/projects/shop/domains/www.example.com").status_code
        ),
    }


def per_request(call: Callable[[], int], requests: int) -> float:
    """This process's CPU per request, in µs: the checks run here, and a loaded machine
    stretches wall time far more than it does the CPU a request takes."""
    started = time.process_time()
    for _ in range(requests):
        status = call()
        assert status in (200, 201), status
    return (time.process_time() - started) / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--requests", type=int, default=200, help="per side and round")
    args = parser.parse_args()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(ALLOWED_HOSTS=[HOST], API_RATE_LIMIT="", API_ADDRESS_RATE_LIMIT=""):
            client = setup()
            print(f"{args.rounds} rounds of {args.requests} requests per side, alternating")
            print(
                "| Operation | Unchecked, CPU µs/req | Checked, CPU µs/req | Checked / unchecked |"
            )
            print("|---|---|---|---|")
            for name, call in operations(client).items():
                per_request(call, 50)  # warm-up: caches, compiled statements
                with unchecked():
                    per_request(call, 50)
                ratios, plain, checked = [], [], []
                for round_ in range(args.rounds):
                    # Each side goes first every other round: neither always has warm caches.
                    for side in ("plain", "checked") if round_ % 2 else ("checked", "plain"):
                        if side == "plain":
                            with unchecked():
                                plain.append(per_request(call, args.requests))
                        else:
                            checked.append(per_request(call, args.requests))
                    ratios.append(checked[-1] / plain[-1])
                print(
                    f"| {name} | {statistics.median(plain):,.0f} | "
                    f"{statistics.median(checked):,.0f} | {statistics.median(ratios):.3f} "
                    f"(rounds {min(ratios):.2f}–{max(ratios):.2f}) |"
                )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
