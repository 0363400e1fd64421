from tests.security.dashboard import alices  # noqa: F401 - a fixture of this folder's tests
