"""Every repository path our prose names exists, so a moved file cannot leave its readers lost.

The prose: README.md, docs/**/*.md and bench/**/*.md (the benchmark's results and its dated
measurement records), and the docstrings and comments of petstore, pets,
domains, devtools, tests and bench (migrations are generated and left out).

A path is named when a token starts with one of our top-level folders and a slash
(`domains/dns/lookups.py`, `domains/pki/`, `.ci/run`) or is one of our top-level files
(`Makefile`, `compose.yaml`), backticked, linked or bare: our comments name files bare as
often as backticked. A Markdown link's target is a path too, read from the document's own
folder (`[edge](edge.md)`). What is not a path of the repository is left alone:
- URLs, and anything glued to a word, a dot or a slash on its left (`/v1/pets/`);
- the runtime's files, under var/ or .venv/;
- globs and placeholders: a token with `*`, `<...>`, `{a,b}`, `$` or an ellipsis;
- history: a path right after "was" names where something used to be.
A `:12` or `:12-30` line suffix is dropped; a `::name` suffix is checked too: the file
must define that function or class.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.processes import ROOT

FOLDERS = (
    "petstore",
    "pets",
    "domains",
    "devtools",
    "tests",
    "bench",
    "docs",
    "deploy",
    "templates",
    "requirements",
    ".ci",
)
FILES = (
    "Makefile",
    "Dockerfile",
    "compose.yaml",
    "Procfile.production",
    "pyproject.toml",
    ".env.example",
    ".pre-commit-config.yaml",
    ".dockerignore",
    ".gitignore",
    "renovate.json",
    "manage.py",
    "README.md",
    "mkdocs.yml",
)
PYTHON_PACKAGES = ("petstore", "pets", "domains", "devtools", "tests", "bench")

_names = "|".join(re.escape(name) for name in FOLDERS)
_files = "|".join(re.escape(name) for name in FILES)
# Left of a path: nothing that would make it the tail of a URL, a word or another path.
# The path itself runs until whitespace, a quote, a bracket or punctuation that ends prose.
PATH = re.compile(
    rf"""(?<![\w./$~@-])
    (?P<path>(?:{_names})/[^\s`'"()\[\]|,;:#]*|(?:{_files})(?![\w.-]))
    (?P<suffix>:\d+(?:-\d+)?|(?:::\w+)+)?
    """,
    re.VERBOSE,
)
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
PLACEHOLDER = re.compile(r"[*<>{}$…]|\.\.\.")
RUNTIME = ("var/", ".venv/")
HISTORY = re.compile(r"\bwas\W*$")


@dataclass(frozen=True)
class Mention:
    path: str  # from the repository's root
    names: tuple[str, ...]  # the `::name` suffix, split
    where: str  # file:line

    def problem(self) -> str | None:
        target = ROOT / self.path
        if not target.exists():
            return f"{self.where}: {self.path} does not exist"
        if self.names:
            defined = _definitions(target) if target.suffix == ".py" else set()
            if missing := [name for name in self.names if name not in defined]:
                return f"{self.where}: {self.path} defines no {', '.join(missing)}"
        return None


def _definitions(path: Path) -> set[str]:
    return {
        node.name
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def mentions_in(text: str, *, source: Path, first_line: int) -> Iterator[Mention]:
    """The repository paths named in `text`, which starts at `first_line` of `source`."""

    def where(offset: int) -> str:
        return f"{_relative(source)}:{first_line + text.count(chr(10), 0, offset)}"

    for match in PATH.finditer(text):
        path = match["path"].rstrip(".")
        if PLACEHOLDER.search(path) or path.startswith(RUNTIME):
            continue
        if HISTORY.search(text[: match.start()]):
            continue
        suffix = match["suffix"] or ""
        names = tuple(suffix.split("::")[1:]) if suffix.startswith("::") else ()
        yield Mention(path.rstrip("/") or path, names, where(match.start()))

    if source.suffix == ".md":
        for match in LINK.finditer(text):
            target = match["target"].split("#", 1)[0]
            if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):  # an anchor or a URL
                continue
            resolved = (source.parent / target).resolve()
            if not resolved.is_relative_to(ROOT):
                yield Mention(target, (), where(match.start()))
                continue
            yield Mention(_relative(resolved) or ".", (), where(match.start()))


def markdown_files() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "bench").rglob("*.md")),
    ]


def python_files() -> list[Path]:
    return [
        path
        for package in PYTHON_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def python_prose(path: Path) -> Iterator[tuple[str, int]]:
    """Each docstring, and each run of comments on consecutive lines, with its first line."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                yield body[0].value.value, body[0].lineno

    run: list[str] = []
    start = previous = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        row = token.start[0]
        if run and row != previous + 1:
            yield "\n".join(run), start
            run = []
        if not run:
            start = row
        run.append(token.string)
        previous = row
    if run:
        yield "\n".join(run), start


def all_mentions() -> list[Mention]:
    mentions: list[Mention] = []
    for path in markdown_files():
        mentions += mentions_in(path.read_text(), source=path, first_line=1)
    for path in python_files():
        for text, line in python_prose(path):
            mentions += mentions_in(text, source=path, first_line=line)
    return mentions


def test_the_rule_finds_paths_and_leaves_urls_globs_placeholders_and_history_alone():
    text = "\n".join(
        [
            "`domains/dns/lookups.py:12` "
            "tests/repository/test_architecture.py::test_there_is_no_import_cycle",
            "see [the sweep](decisions/domain-sweep.md) and the `Makefile`; `domains/pki/`.",
            "https://example.com/docs/x.md, /v1/pets/, `requirements/<set>.txt`, `tests/*.py`,",
            "var/local.env, domains/{dns,pki}/, `docs/…`, (was `pets/idempotency.py`).",
        ]
    )
    found = [
        (mention.path, mention.names, mention.where)
        for mention in mentions_in(text, source=ROOT / "docs" / "x.md", first_line=1)
    ]
    assert found == [
        ("domains/dns/lookups.py", (), "docs/x.md:1"),
        (
            "tests/repository/test_architecture.py",
            ("test_there_is_no_import_cycle",),
            "docs/x.md:1",
        ),
        ("Makefile", (), "docs/x.md:2"),
        ("domains/pki", (), "docs/x.md:2"),
        ("docs/decisions/domain-sweep.md", (), "docs/x.md:2"),
    ]
    assert all(Mention(*mention).problem() is None for mention in found)
    assert Mention("tests/repository/test_architecture.py", ("nothing_here",), "x:1").problem()


def test_the_prose_names_plenty_of_paths():
    # Without this, a rule that matched nothing would pass the test below.
    assert len(all_mentions()) > 300


def test_every_repository_path_named_in_docs_docstrings_and_comments_exists():
    problems = sorted({problem for mention in all_mentions() if (problem := mention.problem())})
    assert not problems, (
        f"{len(problems)} named paths are not in the repository (fix the reference, or the move "
        "that broke it):\n" + "\n".join(problems)
    )
