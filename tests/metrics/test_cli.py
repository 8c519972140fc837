"""`assay score --metrics`, and metric names on the command line going through the registry."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers the commands)
from assay.cli import app
from assay.runs import write_run

from ._util import E

runner = CliRunner()
ASKED = "recall@5,complete@5,hit@5,precision@5,mrr,ndcg@10"


def _case(tmp_path: Path) -> tuple[Path, Path]:
    entries = [
        E("a", [[["a1"], ["a2"]]], cat="x"),
        E("b", [[["b1"]], [["b2"], ["b3"]]], cat="y"),
        E("c", [[["c1"]]], cat="y"),
    ]
    ds = tmp_path / "golden.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in entries))
    run = tmp_path / "run.jsonl"
    write_run(
        run,
        [
            {"id": "a", "retrieved": ["a1", "z", "z2", "z3", "z4", "a2"]},
            {"id": "b", "retrieved": ["b3", "b2", "q"]},
            {"id": "c", "retrieved": ["q", "r"]},
        ],
    )
    return ds, run


def test_score_with_chosen_metrics(tmp_path: Path) -> None:
    ds, run = _case(tmp_path)
    res = runner.invoke(app, ["score", str(ds), str(run), "--metrics", ASKED, "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    x, y = out["categories"]["x"], out["categories"]["y"]
    assert list(x) == ["n", *ASKED.split(","), "unanswerable_n"]
    assert (x["recall@5"], x["complete@5"], x["hit@5"], x["precision@5"]) == (0.5, 0.0, 1.0, 0.2)
    assert x["ndcg@10"] < 1.0 and x["mrr"] == 1.0
    # b: path 2 complete at ranks 1-2 (two of five slots); c: nothing
    assert (y["complete@5"], y["hit@5"], y["precision@5"]) == (0.5, 0.5, 0.2)
    md = runner.invoke(app, ["score", str(ds), str(run), "-m", ASKED, "-f", "markdown"]).stdout
    assert md.splitlines()[0] == (
        "| category | n | recall@5 | complete@5 | hit@5 | precision@5 | mrr | ndcg@10 | unans. |"
    )
    table = runner.invoke(app, ["score", str(ds), str(run), "-m", "hit,precision", "--k", "2"])
    assert table.exit_code == 0 and "hit@2" in table.stdout and "precision@2" in table.stdout


def test_default_columns_are_unchanged(tmp_path: Path) -> None:
    ds, run = _case(tmp_path)
    out = json.loads(runner.invoke(app, ["score", str(ds), str(run), "-f", "json"]).stdout)
    assert list(out["overall"]) == [
        "n",
        "recall@5",
        "complete@5",
        "ndcg@5",
        "mrr",
        "unanswerable_n",
    ]
    md = runner.invoke(app, ["score", str(ds), str(run), "-f", "markdown"]).stdout
    assert md.splitlines()[0] == "| category | n | recall@5 | complete@5 | mrr | ndcg@5 | unans. |"


def test_unknown_metric_exits_2_naming_what_exists(tmp_path: Path) -> None:
    ds, run = _case(tmp_path)
    per_entry = tmp_path / "per_entry.jsonl"
    for bad, says in (
        ("recall@5,accuracy@5", "unknown metric 'accuracy@5'"),
        ("mrr@3", "no cutoff"),
    ):
        res = runner.invoke(
            app, ["score", str(ds), str(run), "--metrics", bad, "--per-entry", str(per_entry)]
        )
        assert res.exit_code == 2, res.output
        assert says in res.output and "Traceback" not in res.output
        assert not per_entry.exists()
    res = runner.invoke(app, ["score", str(ds), str(run), "--metrics", "accuracy"])
    assert "hit@k" in res.output and "precision@k" in res.output  # lists the registry
    res = runner.invoke(app, ["compare", str(ds), str(run), str(run), "-m", "accuracy"])
    assert res.exit_code == 2 and "unknown metric" in res.output


def test_help_lists_the_registry() -> None:
    res = runner.invoke(app, ["compare", "--help"])
    assert "hit@k" in res.output and "precision@k" in res.output
    assert "--metrics" in runner.invoke(app, ["score", "--help"]).output
