"""Settings: typed readers that fail loudly, and the production start-up rules."""

import ipaddress
import os
import re
import secrets
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from petstore.env import env_bool, env_int, env_list, env_networks
from tests.processes import ROOT


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


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


def test_every_reader_takes_a_set_but_empty_value_as_its_default(monkeypatch):
    for name in ("X_BOOL", "X_INT"):
        monkeypatch.setenv(name, " ")
    assert env_bool("X_BOOL", True) is True
    assert env_bool("X_BOOL") is False
    assert env_int("X_INT", 7) == 7


def test_an_empty_session_cookie_secure_keeps_production_cookies_secure():
    shown = _manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.SESSION_COOKIE_SECURE)",
        PETSTORE_ENV_FILE="",
        SECRET_KEY=secrets.token_urlsafe(40),
        SESSION_COOKIE_SECURE="",
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1] == "True"


def test_production_refuses_to_start_without_a_secret_key():
    result = _manage("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_manage_py_without_development_settings_says_what_to_set_in_one_line():
    # A fresh clone in a new terminal: no var/local.env named, no SECRET_KEY, no DEBUG.
    result = _manage("domainstatus", "shop.example.test", PETSTORE_ENV_FILE="")
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("manage.py: SECRET_KEY must be set when DEBUG is off")
    assert "make run" in line and "PETSTORE_ENV_FILE=var/local.env" in line


def test_manage_py_naming_an_env_file_not_written_yet_says_so_in_one_line():
    result = _manage("domainstatus", "shop.example.test", PETSTORE_ENV_FILE="var/no-such.env")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("manage.py: PETSTORE_ENV_FILE=var/no-such.env: no such file")
    assert "make run" in line


def test_manage_py_with_a_setting_it_cannot_read_names_it_in_one_line():
    result = _manage("check", PETSTORE_ENV_FILE="", DEBUG="maybe")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "manage.py: DEBUG must be a boolean (1/0, true/false), got 'maybe'"
    ]


def test_deploy_check_is_clean_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="api.example.com",
        SECURE_SSL_REDIRECT="1",
        NUM_PROXIES="1",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_deploy_check_warns_behind_a_trusted_proxy_that_num_proxies_does_not_count():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="api.example.com",
        NUM_PROXIES="0",
    )
    assert result.returncode != 0
    assert "petstore.W001" in result.stderr + result.stdout
    assert "NUM_PROXIES" in result.stderr + result.stdout


def test_trusted_proxies_are_addresses_and_networks(monkeypatch):
    monkeypatch.setenv("X_NETS", "127.0.0.1, 10.0.0.0/8,::1")
    assert env_networks("X_NETS") == [
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    ]
    monkeypatch.setenv("X_NETS", "")
    assert env_networks("X_NETS", "127.0.0.0/8") == []  # set but empty: no proxy at all
    monkeypatch.delenv("X_NETS")
    assert env_networks("X_NETS", "127.0.0.0/8") == [ipaddress.ip_network("127.0.0.0/8")]


@pytest.mark.parametrize("value", ["edge", "10.0.0.1/24", "10.0.0.0/33", "127.0.0.1:8000"])
def test_a_trusted_proxy_that_is_no_address_or_network_stops_the_process(value):
    result = _manage("check", DEBUG="1", TRUSTED_PROXIES=value)
    assert result.returncode != 0
    assert "TRUSTED_PROXIES must be comma-separated IP addresses or networks" in result.stderr
    assert repr(value) in result.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"DOMAINS_ACME_DIRECTORY": "https://acme.example/dir"},
            "DOMAINS_ACME_DIRECTORY is now DOMAINS_ACME_DIRECTORIES (a list): rename the variable",
        ),
        (
            {
                "DOMAINS_ACME_DIRECTORIES": "https://a.example/dir,https://b.example/dir",
                "DOMAINS_ACME_CAA_IDENTITIES": "a.example,b.example,c.example",
            },
            "DOMAINS_ACME_CAA_IDENTITIES must have one value, or one per item of "
            "DOMAINS_ACME_DIRECTORIES (2), not 3",
        ),
        (
            {"DOMAINS_ACME_EAB": "kid-without-key"},
            "DOMAINS_ACME_EAB must be `key id:HMAC key` (or `-`) per directory",
        ),
    ],
)
def test_a_ca_list_that_does_not_line_up_stops_the_process_naming_what_to_change(env, said):
    result = _manage("check", DEBUG="1", **env)
    assert result.returncode != 0
    assert said in result.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"DOMAINS_DNS01_SERVER": "192.0.2.53", "DOMAINS_DNS01_ZONE": "platform.example"},
            "DOMAINS_DNS01_SERVER is set: set DOMAINS_DNS01_TSIG_KEY_NAME, "
            "DOMAINS_DNS01_TSIG_SECRET too",
        ),
        (
            {"DOMAINS_DNS01_TSIG_SECRET": "not base64 at all!"},
            "DOMAINS_DNS01_TSIG_SECRET must be the TSIG key's secret in base64",
        ),
    ],
)
def test_a_dns01_provider_set_up_halfway_stops_the_process_naming_what_to_change(env, said):
    result = _manage("check", DEBUG="1", **env)
    assert result.returncode != 0
    assert said in result.stderr
    assert "not base64 at all!" not in result.stderr


@pytest.mark.parametrize(
    ("env", "server"),
    [
        ({"DEBUG": "1", "DOMAINS_CA": "acme"}, "127.0.0.1:5399"),
        ({"DEBUG": "1", "DOMAINS_CA": "acme", "DOMAINS_DNS01_SERVER": ""}, ""),
        ({"DEBUG": "1", "DOMAINS_CA": "local"}, ""),
        ({"DOMAINS_CA": "acme", "SECRET_KEY": "production"}, ""),
    ],
)
def test_under_debug_an_acme_ca_writes_dns01_to_the_development_dns_server(env, server):
    """`make run`'s settings file holds a TSIG key: with an ACME CA under DEBUG, DNS-01 goes
    to the development DNS server; the local CA needs none (nor does production get one)."""
    key = {"DOMAINS_DNS01_TSIG_KEY_NAME": "make-run.", "DOMAINS_DNS01_TSIG_SECRET": "c2VjcmV0"}
    shown = _manage(
        "shell",
        "-c",
        "from django.conf import settings as s; "
        "print([s.DOMAINS_DNS01_SERVER, s.DOMAINS_DNS01_ZONE])",
        PETSTORE_ENV_FILE="",
        DOMAINS_DEV_DNS_PORT="5399",
        PLATFORM_DOMAIN="petstore.localhost",
        **key,
        **env,
    )
    assert shown.returncode == 0, shown.stderr
    zone = "petstore.localhost" if env.get("DEBUG") else ""
    assert shown.stdout.splitlines()[-1] == repr([server, zone])


def _deploy_check(**env: str) -> subprocess.CompletedProcess:
    return _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="api.example.com",
        SECURE_SSL_REDIRECT="1",
        **env,
    )


@pytest.mark.parametrize(
    "trusted",
    ["127.0.0.1", "10.77.0.0/24,fd00::/64", "172.16.0.0/12", "198.51.100.7", "::1,fe80::/10"],
)
def test_deploy_check_accepts_loopback_private_networks_and_one_public_address(trusted):
    result = _deploy_check(NUM_PROXIES="1", TRUSTED_PROXIES=trusted)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "petstore.W002" not in result.stdout + result.stderr


def test_deploy_check_warns_when_no_proxy_is_trusted_but_num_proxies_counts_one():
    result = _deploy_check(NUM_PROXIES="1", TRUSTED_PROXIES="")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "petstore.W002" in output
    assert "TRUSTED_PROXIES is empty but NUM_PROXIES is 1" in output
    assert "HINT: Set TRUSTED_PROXIES to the addresses of the proxies" in output


@pytest.mark.parametrize(
    ("trusted", "named"),
    [
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("127.0.0.1,::/0", "::/0"),
        ("10.0.0.0/8,198.51.100.0/24", "198.51.100.0/24"),
        ("0.0.0.0/1", "0.0.0.0/1"),
    ],
)
def test_deploy_check_warns_when_a_trusted_network_reaches_the_internet(trusted, named):
    result = _deploy_check(NUM_PROXIES="1", TRUSTED_PROXIES=trusted)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert output.count("petstore.W002") == 1
    assert f"TRUSTED_PROXIES includes {named}, which reaches beyond loopback" in output


@pytest.mark.django_db
def test_static_files_are_served_without_debug(client, settings):
    """The offline Swagger UI and the admin need their files in production too (WhiteNoise)."""
    assert settings.DEBUG is False
    docs = client.get("/v1/docs/")
    assert docs.status_code == 200
    bundle = re.search(
        r"/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle\.[0-9a-f]{12}\.js",
        docs.content.decode(),
    )
    assert bundle
    response = client.get(bundle.group(0))
    assert response.status_code == 200
    assert b"SwaggerUI" in b"".join(response.streaming_content)


def _debug_with(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    base.pop("PETSTORE_ENV_FILE", None)
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "petstore.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_development_settings_apply_only_where_petstore_env_file_names_them(tmp_path):
    local_env = tmp_path / "local.env"
    local_env.write_text("# written by make run\nDEBUG=1\n")
    named = _debug_with(PETSTORE_ENV_FILE=str(local_env))
    assert named.stdout.strip() == "True", named.stderr
    unnamed = _debug_with(SECRET_KEY="x")
    assert unnamed.stdout.strip() == "False", unnamed.stderr


def test_the_environment_wins_over_the_env_file(tmp_path):
    local_env = tmp_path / "local.env"
    local_env.write_text("DEBUG=1\n")
    result = _debug_with(PETSTORE_ENV_FILE=str(local_env), DEBUG="0", SECRET_KEY="x")
    assert result.stdout.strip() == "False", result.stderr


def test_an_env_file_name_that_is_no_file_stops_the_process():
    result = _debug_with(PETSTORE_ENV_FILE="var/no-such.env")
    assert result.returncode != 0
    assert "PETSTORE_ENV_FILE=var/no-such.env: no such file" in result.stderr


def test_without_a_secret_the_error_says_where_development_settings_are():
    result = _debug_with()
    assert "PETSTORE_ENV_FILE=var/local.env" in result.stderr


@pytest.mark.parametrize(
    ("debug", "port"), [("1", "5399"), ("0", "53")], ids=["development", "production"]
)
def test_a_zones_name_servers_are_asked_on_53_or_on_the_dev_dns_servers_port(debug, port):
    """`make run`'s zones name the dev DNS server as their name server, on its port."""
    printed = "from django.conf import settings; print(settings.DOMAINS_DNS_AUTHORITATIVE_PORT)"
    result = _manage(
        "shell", "-c", printed, DEBUG=debug, SECRET_KEY="x" * 50, PETSTORE_ENV_FILE="",
        DOMAINS_DEV_DNS_PORT="5399", DOMAINS_DNS_AUTHORITATIVE_PORT="",
    )  # fmt: skip
    assert result.stdout.strip().splitlines()[-1] == port, result.stderr


@pytest.mark.parametrize(
    ("debug", "printed"),
    [("1", "['127.0.0.0/8', '::1/128'] ['test', 'localhost']"), ("0", "[] []")],
    ids=["development", "production"],
)
def test_loopback_and_test_names_are_allowed_by_setting_under_debug_only(debug, printed):
    """What a tenant may make the platform reach beyond the public internet: `make run`'s
    loopback servers and `.test` zone under DEBUG, nothing in production."""
    shown = (
        "from django.conf import settings; "
        "print(list(map(str, settings.OUTBOUND_ALLOWED_NETWORKS)), settings.DOMAINS_LOCAL_SUFFIXES)"
    )
    result = _manage(
        "shell", "-c", shown, DEBUG=debug, SECRET_KEY="x" * 50, PETSTORE_ENV_FILE="",
        DJANGO_SETTINGS_MODULE="petstore.settings",
    )  # fmt: skip
    assert result.stdout.strip().splitlines()[-1] == printed, result.stderr
