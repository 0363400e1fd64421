"""Personas for the security tests: alice and bob with API keys (tests/pets/conftest.py's)."""

from tests.pets.conftest import alice, alice_key, api, bob, bob_key  # noqa: F401
