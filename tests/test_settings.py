import pytest
from django.core.exceptions import ImproperlyConfigured

from petstore.env import env_bool, env_int, env_list


def test_env_readers_parse_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "yes")
    monkeypatch.setenv("X_INT", "42")
    monkeypatch.setenv("X_LIST", "127.0.0.1:5353, ,10.0.0.1:53")
    assert env_bool("X_BOOL") is True
    assert env_int("X_INT", 1) == 42
    assert env_list("X_LIST") == ["127.0.0.1:5353", "10.0.0.1:53"]


def test_env_readers_fail_loudly_on_bad_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "maybe")
    monkeypatch.setenv("X_INT", "four")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        env_bool("X_BOOL")
    with pytest.raises(ImproperlyConfigured, match="X_INT"):
        env_int("X_INT", 1)
