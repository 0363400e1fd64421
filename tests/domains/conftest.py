"""The engine's fixtures are the suite's own (tests/fixtures/domains.py, registered in
tests/conftest.py); TARGET stays importable from here for the modules that read it here."""

from tests.fixtures.domains import TARGET

__all__ = ["TARGET"]
