"""A local Ray for the tests that run work on Ray workers (2 CPUs, no dashboard, quiet)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def local_ray(ray: Any, *, with_tests: bool = True) -> Iterator[None]:
    """Start a local Ray with 2 CPUs whose workers import assay from this tree (and, with
    `with_tests`, the test helpers shipped to them); shut it down afterwards."""
    paths = [str(ROOT / "src"), *([str(ROOT)] if with_tests else [])]
    path = os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])
    ray.init(
        num_cpus=2,
        num_gpus=0,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        yield
    finally:
        ray.shutdown()
