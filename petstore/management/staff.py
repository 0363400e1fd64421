"""The base of the commands that change a project: the audit log names staff as their
actor, by `--actor NAME` (who asked for the change), else the operating system's user the
command runs as."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from petstore.actors import acting_as, staff_actor


class StaffCommand(BaseCommand):
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        add_actor_argument(parser)
        return parser

    def execute(self, *args: Any, **options: Any) -> str | None:
        name = options.get("actor") or None
        user_id = (
            get_user_model().objects.filter(username=name).values_list("pk", flat=True).first()
            if name
            else None
        )
        with acting_as(staff_actor(name, user_id=user_id)):
            return super().execute(*args, **options)


def add_actor_argument(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--actor",
        metavar="NAME",
        help="who the audit log names for this change (default: the operating system's user)",
    )
