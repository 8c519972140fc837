"""Scores sliced by format and messiness; scores of different room versions refuse to compare."""

from __future__ import annotations

import pytest
from tests.metrics._util import E, R
from typer.testing import CliRunner

from assay.compare import compare_scores
from assay.errors import DataError
from assay.score import score_retrieval


def _entries(room: str = "assay-synth/2.0/seed7/c6y3") -> list:  # type: ignore[type-arg]
    meta = [
        ("a", "pdf", "scan-heavy", "numeric_lookup"),
        ("b", "pdf", "clean", "numeric_lookup"),
        ("c", "xlsx", "clean", "decoy"),
        ("d", "eml", "clean", "conflict"),
    ]
    es = [
        E(i, [[[f"g{i}"]]], cat=cat, metadata={"format": f, "messiness": m, "room": room})
        for i, f, m, cat in meta
    ]
    es.append(E("u", [], cat="unanswerable", answerable=False, metadata={"room": room}))
    return es


RUN = {"a": ["x", "ga"], "b": ["gb"], "c": ["x"], "d": ["gd"], "u": []}


def test_rows_by_format_and_messiness_are_hand_worked() -> None:
    s = score_retrieval(_entries(), R(RUN), k=1, by="format")
    rows = {k: (r.n, r.values["recall@1"]) for k, r in s.categories.items() if r.n}
    assert rows == {"pdf": (2, 0.5), "xlsx": (1, 0.0), "eml": (1, 1.0)}
    assert s.categories["(none)"].unanswerable_n == 1
    m = score_retrieval(_entries(), R(RUN), k=2, by="messiness")
    assert m.categories["scan-heavy"].values["recall@2"] == 1.0
    assert m.categories["clean"].values["recall@2"] == pytest.approx(2 / 3)
    # the overall row is the same whichever way the rows are cut
    c = score_retrieval(_entries(), R(RUN), k=1)
    assert c.overall is not None and s.overall is not None
    assert c.overall.values == s.overall.values
    assert s.to_dict()["by"] == "format" and "format" in s.to_markdown()
    with pytest.raises(DataError):
        score_retrieval([E("z", [[["q"]]])], R({"z": ["q"]}), k=1, by="format")


def test_different_room_versions_refuse_to_compare() -> None:
    v2 = score_retrieval(_entries(), R(RUN), k=1)
    v1 = score_retrieval(_entries("assay-synth/1.0/seed7/c6y3"), R(RUN), k=1)
    assert v2.room == "assay-synth/2.0" and v1.room == "assay-synth/1.0"
    with pytest.raises(DataError, match="different room versions"):
        compare_scores(v1, v2)
    assert compare_scores(v2, v2).overall is not None


def test_score_cli_by_format_and_bad_by(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    import assay.cli._register  # noqa: F401  (registers every command)
    from assay.cli import app

    ds = tmp_path / "g.jsonl"
    ds.write_text("".join(json.dumps(e.to_json_dict()) + "\n" for e in _entries()))
    run = tmp_path / "r.jsonl"
    run.write_text("".join(json.dumps({"id": k, "retrieved": v}) + "\n" for k, v in RUN.items()))
    res = CliRunner().invoke(
        app, ["score", str(ds), str(run), "--k", "1", "--by", "format", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["by"] == "format" and set(out["categories"]) >= {"pdf", "xlsx", "eml"}
    bad = CliRunner().invoke(app, ["score", str(ds), str(run), "--by", "colour"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
