"""`make helm-check`: the Helm chart (deploy/helm/petstore) rendered and validated offline.

Helm's own engine renders it (helm-python-sdk: Helm's Go SDK in a wheel, no `helm` binary,
no cluster), after `helm lint --strict`; then every manifest is checked by kubernetes-validate
against the schemas of KUBERNETES_VERSION, unknown fields refused. The chart is rendered with
its default values and with each file of deploy/helm/petstore/ci/.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml
from helm_python import Chart, lint

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "deploy" / "helm" / "petstore"
# The oldest Kubernetes the chart supports (Chart.yaml's kubeVersion) that the validator has
# schemas for; raise both together.
KUBERNETES_VERSION = "1.33.0"


def value_sets() -> dict[str, dict[str, Any]]:
    """The values each check renders with: the defaults, and each file of ci/ over them."""
    sets: dict[str, dict[str, Any]] = {"defaults": {}}
    for path in sorted((CHART / "ci").glob("*.yaml")):
        sets[path.name] = yaml.safe_load(path.read_text()) or {}
    return sets


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The chart's manifests with `values`, as Helm renders an install of release `petstore`,
    hooks included."""
    rendered = Chart.load(CHART).render(values or {}, name="petstore", namespace="petstore")
    return [
        document
        for path, text in sorted(rendered.items())
        if path.endswith((".yaml", ".yml"))
        for document in yaml.safe_load_all(text)
        if document
    ]


def problems(values: dict[str, Any]) -> list[str]:
    """What `helm lint --strict` and the schemas find wrong with the chart on `values`."""
    found = []
    report = lint(CHART, values, strict=True, kube_version=f"v{KUBERNETES_VERSION}")
    found += [f"helm lint: {message['path']}: {message['error']}" for message in report["messages"]
              if message["severity"] >= 2]  # fmt: skip
    found += [f"helm lint: {error}" for error in report.get("errors") or []]
    for manifest in render(values):
        name = f"{manifest['kind']}/{manifest['metadata']['name']}"
        try:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            found.append(f"{name}: {'.'.join(map(str, error.path))}: {error.message}")
    return found


def main() -> int:
    failed = False
    for label, values in value_sets().items():
        found = problems(values)
        count = len(render(values))
        print(f"helm-check: {label}: {count} manifests, Kubernetes {KUBERNETES_VERSION}: "
              + ("valid" if not found else f"{len(found)} problems"))  # fmt: skip
        for problem in found:
            print(f"  {problem}")
        failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
