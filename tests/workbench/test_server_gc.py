"""A server process tunes its garbage collector once its app is built (`_server_gc`): the
objects loaded so far frozen, young collections every 10,000 new objects, not 700."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.workbench.app import WorkbenchConfig, app_from_env, config_to_env, serve


@pytest.fixture
def gc_restored() -> Iterator[None]:
    """The collector's thresholds as they were, and what is alive frozen again if anything was
    (the suite freezes what it collected: tests/conftest.py)."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
        if frozen:
            gc.freeze()


def test_serve_tunes_the_collector_before_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gc_restored: None
) -> None:
    gc.unfreeze()
    seen: dict[str, Any] = {}

    def run(app: Any, **kw: Any) -> None:
        seen["threshold"], seen["frozen"] = gc.get_threshold(), gc.get_freeze_count()

    import uvicorn

    monkeypatch.setattr(uvicorn, "run", run)
    serve(WorkbenchConfig(db_url=f"sqlite:///{tmp_path / 's.db'}"), host="127.0.0.1", port=1)
    assert seen["threshold"][0] == 10_000
    assert seen["frozen"] > 0  # the app and the modules loaded for it


def test_a_worker_built_from_the_environment_tunes_it_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gc_restored: None
) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    for k, v in config_to_env(WorkbenchConfig(db_url=f"sqlite:///{tmp_path / 's.db'}")).items():
        monkeypatch.setenv(k, v)
    app_from_env()
    assert gc.get_threshold()[0] == 10_000
    assert gc.get_freeze_count() > 0
