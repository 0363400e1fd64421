"""The Helm chart (deploy/helm/petstore), rendered by Helm's engine offline
(devtools/helmcheck.py): valid against Kubernetes' schemas, and shaped as production runs the
platform (Procfile.production's processes, the key only where the systemd units give it)."""

from __future__ import annotations

from typing import Any

import pytest

from devtools import helmcheck
from tests.cluster.services import production_command

# Each Procfile.production process and the chart's Deployment running it.
DEPLOYMENTS = {
    "web": "web",
    "edge": "edge",
    "worker": "checks",
    "certificates": "certificates",
    "webhooks": "webhooks",
    "beat": "beat",
}


@pytest.fixture(scope="module")
def manifests() -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (manifest["kind"], manifest["metadata"]["name"].removeprefix("petstore-")): manifest
        for manifest in helmcheck.render()
    }


def _pod(manifests, name: str) -> dict[str, Any]:
    return manifests["Deployment", name]["spec"]["template"]["spec"]


def test_the_chart_renders_and_validates_with_every_value_set():
    for label, values in helmcheck.value_sets().items():
        assert helmcheck.problems(values) == [], label


def test_each_process_is_a_deployment_of_its_own_running_its_procfile_line(manifests):
    deployments = {name for kind, name in manifests if kind == "Deployment"}
    assert deployments == set(DEPLOYMENTS.values())
    for process, deployment in DEPLOYMENTS.items():
        [container] = _pod(manifests, deployment)["containers"]
        line = production_command(process).split()
        # The Procfile's options, the chart's queue, pool and concurrency as values.
        assert container["command"][: len(line[:5])] == line[:5], process


def test_beat_is_one_replica_replaced_by_recreate(manifests):
    beat = manifests["Deployment", "beat"]["spec"]
    assert beat["replicas"] == 1
    assert beat["strategy"] == {"type": "Recreate"}


def test_the_release_migrates_in_a_hook_before_each_install_and_upgrade(manifests):
    job = manifests["Job", "release"]
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == production_command("release").split()


def test_web_is_probed_on_healthz_and_readyz(manifests):
    [web] = _pod(manifests, "web")["containers"]
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_web_and_the_edge_keep_pods_through_a_drain_and_the_edge_is_a_load_balancer(manifests):
    for name in ("web", "edge"):
        budget = manifests["PodDisruptionBudget", name]["spec"]
        assert budget["minAvailable"] >= 1
        selected = manifests["Deployment", name]["spec"]["selector"]["matchLabels"]
        assert budget["selector"]["matchLabels"] == selected
    edge = manifests["Service", "edge"]["spec"]
    assert edge["type"] == "LoadBalancer"
    assert {port["port"] for port in edge["ports"]} == {80, 443}


def test_the_sealing_key_reaches_only_the_edge_and_the_certificates_worker(manifests):
    holding = set()
    for kind, name in manifests:
        if kind not in ("Deployment", "Job"):
            continue
        spec = manifests[kind, name]["spec"]["template"]["spec"]
        secrets = {v["secret"]["secretName"] for v in spec.get("volumes", []) if "secret" in v}
        env = {e["name"] for c in spec["containers"] for e in c.get("env", [])}
        if "petstore-keys" in secrets or "DOMAINS_KEY_ENCRYPTION_KEY_FILE" in env:
            holding.add(name)
    assert holding == {"edge", "certificates"}


def test_every_container_states_its_resources_and_runs_unprivileged(manifests):
    for (kind, name), manifest in manifests.items():
        if kind not in ("Deployment", "Job"):
            continue
        spec = manifest["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for container in spec["containers"]:
            assert container["resources"]["requests"], name
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, name
