"""The release before, run against this checkout's schema: the way back, tried (.ci/run).

A deploy migrates first, then replaces the processes one at a time; a rollback puts the
release before back on the schema as it is (docs/operators/rollback.md). Both hold only if
the release before's code works on today's schema. So this takes that release's tree at its
commit (named in its CHANGELOG.md heading; `git archive`, into a temporary folder), migrates
an empty database with today's code, and runs the release before's own tests of the API
and the dashboard (reads and writes: pets, domains, webhooks, keys, the dashboard's pages)
on that database, with its own code on the import path.

pytest-django's `--reuse-db` keeps the database as migrated; the old tests' `migrate` then
finds each of its migrations applied and changes nothing. (`--no-migrations` is left out on
purpose: it creates every table the old models name and the database lacks, which would
hide a table today's schema dropped.) The schema is read before and after, and must be the
same: the old code ran on today's schema, not on one it made.

    python -m devtools.previous_release [--release REVISION] [pytest arguments]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[1]
# The release before's own tests run here: each reads and writes through its HTTP API or
# pages on the test client, in a transaction rolled back after it (a test that flushes
# tables or starts processes would test the harness, not the release).
TESTS = (
    "tests/pets/api/test_list.py",
    "tests/pets/api/test_create.py",
    "tests/pets/api/test_get.py",
    "tests/petstore/api/test_auth.py",
    "tests/domains/api/test_operations.py",
    "tests/domains/api/test_refusals.py",
    "tests/domains/webhooks/test_api.py",
    "tests/domains/dashboard/test_domains.py",
    "tests/domains/dashboard/test_redirects.py",
)
# The database the old tests are pointed at; pytest-django prefixes `test_`.
DATABASE = "previous_release"
# A release's heading names the commit that set its version, so a clone without tags (the
# sessions cannot push them) still finds it: `## [1.1.0] - 2026-12-06 (commit 096a595db33c)`.
# The commit is added by the first change after the release (a commit cannot name itself);
# a tag `vX.Y.Z`, where the clone has one, names the same commit.
HEADING = re.compile(
    r"^## \[(?P<release>[^\]]+)\]"
    r"(?: - (?P<date>\d{4}-\d{2}-\d{2}))?(?: \(commit (?P<commit>[0-9a-f]{7,40})\))?$",
    re.M,
)
SCHEMA = """
SELECT table_name, column_name, data_type, is_nullable, column_default
  FROM information_schema.columns
 WHERE table_schema = 'public'
 ORDER BY table_name, column_name
"""


GIT = shutil.which("git") or "git"


def git(*args: str) -> str:
    return subprocess.run(  # noqa: S603 (git on this checkout)
        [GIT, *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


@dataclass(frozen=True)
class Release:
    number: str
    date: str | None
    commit: str | None


def changelog_releases(text: str) -> list[Release]:
    """The released sections, newest first; Keep a Changelog's `## [Unreleased]` on top,
    where what is merged waits for its number, is not one of them."""
    found = [Release(m["release"], m["date"], m["commit"]) for m in HEADING.finditer(text)]
    return [release for release in found if release.number != "Unreleased"]


def resolve(revision: str) -> str | None:
    found = subprocess.run(  # noqa: S603 (git on this checkout)
        [GIT, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() if found.returncode == 0 else None


def release_commit(release: Release) -> str:
    """The commit of `release`: the one its heading names, else its tag."""
    revision = release.commit or f"v{release.number}"
    commit = resolve(revision)
    if commit is None:
        version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
        raise SystemExit(
            f"release {release.number} (version {version}): no commit {revision} in this "
            f"clone; name the release's commit in its CHANGELOG.md heading, "
            f"'## [{release.number}] - DATE (commit HASH)', and clone with history "
            "(docs/decisions/releases.md)"
        )
    return commit


def previous_release() -> str:
    """The commit of the newest release in CHANGELOG.md that is not this commit."""
    head = git("rev-parse", "HEAD")
    for release in changelog_releases((ROOT / "CHANGELOG.md").read_text()):
        commit = release_commit(release)
        if commit != head:
            return commit
    raise SystemExit("CHANGELOG.md names no release before this commit")


def database_url(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def schema(url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as connection:
        return list(connection.execute(SCHEMA).fetchall())


def fresh_database(url: str) -> None:
    name = urlsplit(url).path.strip("/")
    with psycopg.connect(database_url(url, "postgres"), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def unpack(revision: str, into: Path) -> None:
    archive = subprocess.run(  # noqa: S603 (git on this checkout)
        [GIT, "archive", "--format=tar", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def run(command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> None:
    print("+", " ".join(command), f"(in {cwd})", flush=True)
    subprocess.run(command, cwd=cwd, env=env, check=True)  # noqa: S603 (this venv's python)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", help="the tag or commit to run (default: the release before)")
    options, pytest_args = parser.parse_known_args(argv)
    base = os.environ.get("DATABASE_URL")
    if not base:
        raise SystemExit("name the PostgreSQL server in DATABASE_URL (any database on it)")
    revision = options.release or previous_release()
    name = revision[:12]
    old_url = database_url(base, DATABASE)
    test_url = database_url(base, f"test_{DATABASE}")
    fresh_database(test_url)
    # Today's migrations, as a deploy's release phase runs them, on the tests' settings
    # (pyproject's pytest `env`: a throwaway secret key, no local settings file).
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tests_env = dict(
        item.split("=", 1) for item in pyproject["tool"]["pytest"]["ini_options"]["env"]
    )
    today = {**os.environ, **tests_env, "DATABASE_URL": test_url, "PYTHONPATH": str(ROOT)}
    run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=today)
    migrated = schema(test_url)
    with tempfile.TemporaryDirectory(prefix=f"petstore-{name}-") as folder:
        tree = Path(folder)
        unpack(revision, tree)
        old = {**os.environ, "DATABASE_URL": old_url, "PYTHONPATH": str(tree)}
        old.pop("PYTEST_XDIST_WORKER", None)
        # Its own code, not this checkout's (the venv's editable install points here).
        check = "import petstore, sys; sys.exit(not petstore.__file__.startswith(sys.argv[1]))"
        run([sys.executable, "-c", check, str(tree)], cwd=tree, env=old)
        print(f"{name}'s tests on this checkout's schema", flush=True)
        run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--reuse-db"]
            + [*TESTS, *pytest_args],
            cwd=tree,
            env=old,
        )
    after = schema(test_url)
    if after != migrated:
        changed = sorted(set(after) ^ set(migrated))
        raise SystemExit(f"{name}'s run changed the schema: {changed[:10]}")
    print(f"{name} ran on this checkout's schema, which it left as it was")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
