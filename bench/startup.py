"""How long the README's two commands take, as a newcomer meets them.

    python bench/startup.py run CHECKOUT [--cold]   # `make run` to its printed hints
    python bench/startup.py test CHECKOUT [PYTEST_ARGS...]   # `make test`, wall clock

`run` starts `make run` in CHECKOUT on free ports with no DATABASE_URL or REDIS_URL (a
laptop's environment), and times two phases from the make command's own output: the
install (until make echoes the first command after it) and the start-up (from there until
the hints' last line). Then it stops the run with Ctrl-C, as a developer does. `--cold`
removes the checkout's .venv and var/ first (a new clone; pip's cache is the machine's).
Numbers go to docs/decisions/platform.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# The last line the hints process prints (devtools/devserver.py).
HINTS_DONE = "Ctrl-C stops every process."
# What make echoes once the install set is in place: the first command of `run`'s recipe
# that it prints, after its prerequisites.
INSTALL_DONE = ("devtools.devserver", "manage.py migrate")
LAPTOP_UNSET = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "REQUIRE_SERVICES")
TIMEOUT = 900.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def laptop_environ() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in LAPTOP_UNSET}


def time_run(checkout: Path, cold: bool) -> dict[str, float]:
    if cold:
        shutil.rmtree(checkout / ".venv", ignore_errors=True)
        shutil.rmtree(checkout / "var", ignore_errors=True)
    env = laptop_environ()
    ports = {
        "PORT": free_port(),
        "HTTPS_PORT": free_port(),
        "EDGE_CERTIFICATES_PORT": free_port(),
        "DOMAINS_DEV_DNS_PORT": free_port(),
    }
    command = ["make", "run", *(f"{name}={port}" for name, port in ports.items())]
    started = time.monotonic()
    process = subprocess.Popen(  # noqa: S603
        command,
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    installed = done = None
    try:
        for line in process.stdout:
            now = time.monotonic() - started
            if installed is None and any(mark in line for mark in INSTALL_DONE):
                installed = now
            if HINTS_DONE in line:
                done = now
                break
            if now > TIMEOUT:
                break
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if done is None or installed is None:
        status = process.returncode
        raise SystemExit(f"startup: make run in {checkout} printed no hints (exit {status})")
    return {
        "install_s": round(installed, 1),
        "startup_s": round(done - installed, 1),
        "total_s": round(done, 1),
    }


def time_test(checkout: Path, pytest_args: list[str]) -> dict[str, float]:
    env = laptop_environ()
    env["PYTEST_ARGS"] = " ".join(pytest_args)
    started = time.monotonic()
    result = subprocess.run(["make", "test"], cwd=checkout, env=env, check=False)  # noqa: S603,S607
    return {"seconds": round(time.monotonic() - started, 1), "exit": float(result.returncode)}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python bench/startup.py")
    parser.add_argument("what", choices=["run", "test"])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    if args.what == "run":
        print(time_run(args.checkout.resolve(), args.cold))
    else:
        print(time_test(args.checkout.resolve(), args.pytest_args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
