"""A Redis Sentinel deployment of the test's own on loopback: a primary, a replica and three
sentinels, from Debian's `redis-server` and `redis-sentinel` (.ci/run installs them), nothing
on disk. Never the machine's Redis.

No `min-replicas-to-write`: a primary that refuses writes answers a worker's blocking pop
with NOREPLICAS, which kombu takes for a broken channel rather than a lost connection, and the
worker exits (docs/operators/kubernetes.md, "Redis").
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import redis

from devtools.processes import spawn, stop_group
from devtools.sockets import free_port
from tests.processes import wait_for

NAME = "petstore"  # the primary's name, as the sentinels know it
REDIS_SERVER = "/usr/bin/redis-server"
REDIS_SENTINEL = "/usr/bin/redis-sentinel"


def _client(port: int) -> redis.Redis:
    return redis.Redis(port=port, socket_connect_timeout=1, socket_timeout=5, decode_responses=True)


class SentinelDeployment:
    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "sentinel"
        self.dir.mkdir()
        self.primary, self.replica = free_port(), free_port()
        self.sentinels = [free_port() for _ in range(3)]
        self.processes: list[subprocess.Popen] = []

    @property
    def addresses(self) -> str:
        """REDIS_SENTINELS's value."""
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinels)

    def _server(self, port: int, *options: str) -> None:
        command = [
            REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(self.dir),
            *options,
        ]  # fmt: skip
        self.processes.append(spawn(command, env={}, log_path=self.dir / f"redis-{port}.log"))

    def start(self) -> SentinelDeployment:
        self._server(self.primary)
        self._server(self.replica, "--replicaof", "127.0.0.1", str(self.primary))
        for port in self.sentinels:
            conf = self.dir / f"sentinel-{port}.conf"  # a sentinel rewrites its own file
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                f"sentinel monitor {NAME} 127.0.0.1 {self.primary} 2\n"
                f"sentinel down-after-milliseconds {NAME} 2000\n"
                f"sentinel failover-timeout {NAME} 10000\n"
            )
            log = self.dir / f"sentinel-{port}.log"
            self.processes.append(spawn([REDIS_SENTINEL, str(conf)], env={}, log_path=log))
        wait_for(self.settled, timeout=60, what="the sentinels to know the replica and each other")
        return self

    def primary_port(self, sentinel: int) -> int:
        # redis-py types the sentinel commands' answers loosely.
        address: Any = _client(sentinel).sentinel_get_master_addr_by_name(NAME)
        return int(address[1])

    def settled(self) -> bool:
        """Every sentinel names the same primary, knows a replica of it that is in sync and
        the two other sentinels; the primary takes writes (its replica is connected)."""
        try:
            primaries = {self.primary_port(port) for port in self.sentinels}
            if len(primaries) != 1:
                return False
            [primary] = primaries
            for port in self.sentinels:
                replicas: Any = _client(port).sentinel_slaves(NAME)
                others: Any = _client(port).sentinel_sentinels(NAME)
                if not any(r["is_slave"] and not r["is_sdown"] for r in replicas):
                    return False
                if len(others) != 2:
                    return False
            return _client(primary).info("replication")["connected_slaves"] >= 1
        except (redis.RedisError, OSError):
            return False

    def failover(self) -> int:
        """SENTINEL FAILOVER, as an operator (or a dying primary) starts one; the port of the
        primary it left."""
        old = self.primary_port(self.sentinels[0])
        _client(self.sentinels[0]).execute_command("SENTINEL", "FAILOVER", NAME)
        return old

    def stop(self) -> None:
        for process in self.processes:
            stop_group(process, graceful=5)
