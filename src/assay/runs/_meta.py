"""The `.meta.json` sidecar of a run file (any format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay._io import json_loads

__all__ = ["run_meta_path"]


def run_meta_path(path: str | Path) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".meta.json")


def _read_meta(path: Path) -> dict[str, Any]:
    mp = run_meta_path(path)
    if mp.exists():
        try:
            meta = json_loads(mp.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return {}
        return meta if isinstance(meta, dict) else {}
    return {}
