from tests.security.dashboard import alices  # noqa: F401 - a fixture of these tests
