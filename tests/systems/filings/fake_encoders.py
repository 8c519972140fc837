"""A cached encoder without a model, for tests that ship encoders to other processes: a
`DenseEncoder` whose "model" is feature hashing, and which notes each model load (one line per
load, with the process id) in `loads_file`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.systems.filings.dense import DenseEncoder, HashingEncoder, Vectors


class FakeModelEncoder(DenseEncoder):
    def __init__(self, *, cache_dir: Path | None, loads_file: Path, max_chars: int = 1000) -> None:
        super().__init__(cache_dir=cache_dir, model_id="fake-hashing-32", max_chars=max_chars)
        self.loads_file = loads_file
        self.calls: list[list[str]] = []  # the lists run through the "model", in this process

    def _load(self) -> Any:
        if self._model is None:
            with self.loads_file.open("a") as fh:
                fh.write(f"{os.getpid()}\n")
            self._model = HashingEncoder(dim=32)
        return self._model

    def _embed(self, texts: list[str]) -> Vectors:
        self.calls.append(list(texts))
        out: Vectors = self._load().encode(texts)
        return out
