"""Run files: what a system returned for every entry, and qrels from a golden dataset.

- `model`: `Hit`, `RunRow` and the columnar `Run` (`parse_hit` is the one parser of a hit, for
  run files and live systems alike);
- `jsonl`: assay's own run format (`load_run` also reads TREC runs), with a `.meta.json` sidecar;
- `parquet`: the same runs as Parquet (the `fast` extra), picked by a `.parquet` file name;
- `trec`: TREC run and qrels files for trec_eval, pytrec_eval and ranx users;
- `qrels`: TREC qrels built from a dataset (anchors resolved onto a chunk table);
- `binding`: rows bound to their entries (`check_binding`: rows whose entry changed are refused).
"""

from assay.runs.jsonl import load_run, run_meta_path, write_run
from assay.runs.model import Hit, Run, RunRow, parse_hit
from assay.runs.parquet import read_parquet_run, write_parquet_run
from assay.runs.qrels import Qrels, page_run, qrels_from_dataset
from assay.runs.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "Hit",
    "Qrels",
    "Run",
    "RunRow",
    "load_run",
    "page_run",
    "parse_hit",
    "qrels_from_dataset",
    "read_parquet_run",
    "read_trec_qrels",
    "read_trec_run",
    "run_meta_path",
    "write_parquet_run",
    "write_run",
    "write_trec_qrels",
    "write_trec_run",
]
