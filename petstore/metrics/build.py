"""petstore_build_info{version}: 1, with the release this process runs (pyproject.toml's
`version`, read from the installed distribution's metadata).

A gauge of the answering process, not a platform total: during a rolling deploy the web
processes of two releases answer side by side, and `count by (version)` shows both.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from importlib.metadata import version

from prometheus_client.metrics_core import GaugeMetricFamily, Metric

DISTRIBUTION = "petstore"


@cache
def release() -> str:
    return version(DISTRIBUTION)


class BuildInfoCollector:
    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "petstore_build_info",
            "The release this process runs (its version label); always 1.",
            labels=["version"],
        )
        family.add_metric([release()], 1)
        yield family
