"""Suite-wide fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_fresh_registry(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own fresh-sample registry, never the user's."""
    path = tmp_path_factory.mktemp("fresh-registry") / "fresh.sqlite"
    monkeypatch.setenv("ASSAY_FRESH_REGISTRY", str(path))
    return path
