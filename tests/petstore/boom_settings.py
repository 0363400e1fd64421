"""The tests' settings with one more URL, /boom/, whose view raises: a real view error
for the error-report tests (tests/petstore/test_error_reports.py)."""

from tests.settings import *  # noqa: F403

ROOT_URLCONF = "tests.petstore.boom_urls"
