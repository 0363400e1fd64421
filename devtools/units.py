"""The systemd units of deploy/systemd/, read and verified as systemd would load them.

    python -m devtools.units      # systemd-analyze verify deploy/systemd/*; silent when clean

The units name the paths of an installed host: the checkout in /opt/petstore, its `.venv`,
/usr/bin/env, /bin/kill. `systemd-analyze verify` checks that every command it would run is
an executable file, so the units are verified unchanged, in a stand-in of that host made in a
temporary folder (`--root`): systemd's own units copied from this machine, the units in
/etc/systemd/system, an empty executable for each command. systemd-analyze exits 0 after a
warning (an unknown key, a value it cannot parse): any line it prints is a failure here.
Used by .ci/run and tests/deploy/test_systemd_units.py; needs only the `systemd` package, no running
systemd.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNITS_DIR = ROOT / "deploy" / "systemd"
SYSTEM_UNITS = Path("/usr/lib/systemd/system")


def systemd_analyze() -> str | None:
    return shutil.which("systemd-analyze")


def unit_files(directory: Path = UNITS_DIR) -> list[Path]:
    return sorted(path for path in directory.iterdir() if path.is_file())


def directives(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Each section's `Key=value` lines in order (a key may repeat: ExecStart= in a oneshot,
    Wants=), comments and continuation-free lines as systemd reads them."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
        elif current is not None:
            key, _, value = line.partition("=")
            current.append((key.strip(), value.strip()))
    return sections


def values(path: Path, section: str, key: str) -> list[str]:
    return [value for name, value in directives(path).get(section, []) if name == key]


def command_argv(exec_line: str) -> list[str]:
    """An Exec*= value as the argv systemd runs: its prefixes (`-`, `@`, ...) dropped, `%%`
    (systemd's escape of a literal %) made `%` again."""
    return [word.replace("%%", "%") for word in shlex.split(exec_line.lstrip("-@:+!|"))]


def verify(directory: Path = UNITS_DIR) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` of every unit in `directory`, in a stand-in of the host."""
    analyze = systemd_analyze()
    if analyze is None:
        raise FileNotFoundError("systemd-analyze (Debian's `systemd` package)")
    units = unit_files(directory)
    with tempfile.TemporaryDirectory(prefix="units-") as temporary:
        root = Path(temporary)
        shutil.copytree(SYSTEM_UNITS, root / SYSTEM_UNITS.relative_to("/"), symlinks=True)
        installed = root / "etc" / "systemd" / "system"
        installed.mkdir(parents=True)
        for unit in units:
            shutil.copy(unit, installed / unit.name)
            for key in ("ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop"):
                for line in values(unit, "Service", key):
                    program = root / command_argv(line)[0].lstrip("/")
                    program.parent.mkdir(parents=True, exist_ok=True)
                    program.write_text("#!/bin/sh\n")
                    program.chmod(0o755)
        return subprocess.run(  # noqa: S603 (systemd-analyze on our own files)
            [analyze, "verify", f"--root={root}", *(str(installed / u.name) for u in units)],
            capture_output=True,
            text=True,
            check=False,
        )


def main() -> int:
    result = verify()
    output = (result.stdout + result.stderr).strip()
    if output:
        print(output)
    return 1 if output or result.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
