"""The results bundle: what it holds per run and per entry, attribution when available, bytes."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from assay.attribution import attribute
from assay.corpus import load_chunks
from assay.dataset import load_dataset
from assay.errors import DataError
from assay.explorer import SCHEMA, export_bundle, load_bundle
from assay.runs import load_run
from assay.score import score_retrieval

from .conftest import ATTRIBUTION, Case

FAST = {"n_resamples": 200, "n_permutations": 200}


def _export(case: Case, **kw: Any) -> Any:
    return export_bundle(
        case.dataset,
        case.runs,
        chunks=case.chunks,
        ladder=case.ladder,
        judged={"cand": case.judged},
        **(FAST | kw),
    )


def test_bundle_rows_scores_and_comparisons(case: Case) -> None:
    data = _export(case).data
    assert data["schema"] == SCHEMA and data["baseline"] == "base"
    assert [r["name"] for r in data["runs"]] == ["base", "cand", "third"]
    # scores are score_retrieval's, with intervals
    table = load_chunks(case.chunks)
    ref = score_retrieval(load_dataset(case.dataset), load_run(case.runs[1]), k=5, chunks=table)
    assert data["scores"]["cand"]["overall"]["complete@5"] == ref.overall.values["complete@5"]
    # a rate's interval: as `assay score --ci` draws it; this dataset has several entries per
    # document, so by default (as score, check and compare do) a document is one draw
    from assay.dataset import clustering_for

    clusters = clustering_for(load_dataset(case.dataset).entries)
    assert clusters is not None and data["clustering"]["field"] == "doc"
    assert data["clustering"] == clusters.summary([e["id"] for e in data["entries"]]).to_dict()
    ref.add_ci(n_resamples=200, clusters=clusters)
    ci = data["scores"]["cand"]["overall"]["complete@5_ci"]
    want = ref.overall.ci["complete@5"]
    assert (ci["method"], ci["low"], ci["high"]) == (want.method, want.low, want.high)
    assert want.method == "cluster clopper-pearson"
    # comparisons: cand fixes q2, q3, q5 (q7 finds half its path: not complete), breaks q6
    cmp = data["comparisons"]["cand"]["overall"]["metrics"]["complete@5"]
    assert cmp["fixed_ids"] == ["q2", "q3", "q5"]
    assert cmp["broken_ids"] == ["q6"]
    assert data["leaderboard"]["leaderboard"][0]["run"] == "cand"
    assert data["ladder"]["rows"][1]["rung"] == "+filters"
    # each run's attribution is assay.attribution's, on the same chunks and k
    for i, name in enumerate(("base", "cand", "third")):
        att = attribute(load_dataset(case.dataset), load_run(case.runs[i]), chunks=table, k=5)
        got = data["attribution"][name]
        pieces = {e["id"]: e.pop("piece", None) for e in got["entries"]}
        assert got == json.loads(json.dumps(att.to_dict()))
        for e in att.failed:  # plus the 1-based "path.piece" label the site shows
            want = None if e.group is None else f"{e.path + 1}.{e.group + 1}"
            assert pieces[e.id] == want
    assert "parse" in data["attribution"]["cand"]["unseen_stages"]  # no corpus page text given
    assert not any("attribution" in n for n in data["notes"])
    # checks only for the run that answered
    assert set(data["checks"]) == {"cand"}


def test_entry_rows_mark_gold_and_say_what_is_missing(case: Case) -> None:
    data = _export(case).data
    rows = {e["id"]: e for e in data["entries"]}
    q2 = rows["q2"]
    assert q2["as_of"] == "2024-03-31" and q2["category"] == "lookup"
    alt = q2["paths"][0][0]["alternatives"][0]
    assert (alt["doc"], alt["page"], alt["chunks"]) == ("acme-10k", 2, ["acme-10k/2/1"])
    assert alt["quote"] == "Operating margin was 14.2% in fiscal 2023"
    cand, base = q2["runs"]["cand"], q2["runs"]["base"]
    assert cand["status"] == "pass" and base["status"] == "fail"
    assert cand["retrieved"][0] == {
        "rank": 1,
        "chunk_id": "acme-10k/2/1",
        "score": 10.0,
        "gold": ["1.1"],
    }
    assert all(not h["gold"] for h in base["retrieved"]) and base["missing_pieces"] == ["1.1"]
    assert cand["answer"].startswith("Operating margin was 14.2%")
    assert cand["checks"]["numbers_verified"] is True
    assert cand["judge"]["critiques"]["supported"].startswith("The answer to q2")
    # two paths, the first half found: best path 1, piece 1.1 missing
    q7 = rows["q7/both margins"]["runs"]["cand"]
    assert q7["status"] == "fail" and q7["best_path"] == 1 and q7["missing_pieces"] == ["1.1"]
    assert q7["retrieved"][0]["gold"] == ["1.2"]
    # the text of every chunk shown is in the bundle
    assert data["chunk_text"]["acme-10k/2/1"]["text"].startswith("Operating margin")


def test_attribution_is_filled_when_the_module_exists(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    class Report:
        def to_dict(self) -> dict[str, Any]:
            return ATTRIBUTION

    def attribute(dataset: Any, run: Any, **kw: Any) -> Report:
        seen.append(kw)
        return Report()

    fake = types.ModuleType("assay.attribution")
    fake.attribute = attribute  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "assay.attribution", fake)
    data = _export(case, corpus=case.dataset.parent).data
    assert data["attribution"]["cand"] == ATTRIBUTION
    assert len(seen) == 3 and seen[0]["corpus"] == case.dataset.parent
    q4 = next(e for e in data["entries"] if e["id"] == "q4")
    assert (q4["runs"]["base"]["stage"], q4["runs"]["base"]["group"]) == ("recall", "1.1")
    assert not any("attribution" in n for n in data["notes"])


def test_same_inputs_same_bytes(case: Case, tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _export(case, out=a)
    _export(case, out=b)
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    assert str(tmp_path) not in text  # no absolute paths in the bundle
    assert load_bundle(a).data == json.loads(text)


def test_load_bundle_refuses_other_files(case: Case, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a results bundle"):
        load_bundle(case.ladder)
    with pytest.raises(DataError, match="bad JSON"):
        load_bundle(case.dataset)


def test_judged_for_an_unknown_run_is_refused(case: Case) -> None:
    with pytest.raises(DataError, match="no run named 'nope'"):
        export_bundle(case.dataset, case.runs, chunks=case.chunks, judged={"nope": case.judged})


def test_chunks_table_loads_for_the_case(case: Case) -> None:
    assert len(load_chunks(case.chunks)) == 6


def test_a_sealed_fresh_sample_is_used_once(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.dataset import fresh

    fresh.seal(case.dataset)
    data = _export(case).data  # scoring, comparisons and checks of every run: one use
    assert data["fresh"]["uses"] == 1 and len(fresh.uses(case.dataset)) == 1
    with pytest.raises(fresh.FreshReuseError):
        _export(case)
    assert len(fresh.uses(case.dataset)) == 1


def test_the_bundle_holds_gold_entries_and_says_what_it_left_out(
    case: Case, tmp_path: Path
) -> None:
    """Two entries stated draft, one ambiguous: the bundle shows the rest and names them."""
    rows = [json.loads(line) for line in case.dataset.read_text().splitlines()]
    for r in rows:
        r["label_tier"] = "gold"
    rows[0]["label_tier"] = rows[1]["label_tier"] = "draft"
    rows[2] |= {"ambiguous": True, "ambiguous_reason": "which fiscal year is meant"}
    tiered = case.dataset.with_name("tiered.jsonl")
    tiered.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    bundle = export_bundle(tiered, case.runs, chunks=case.chunks, n_resamples=200)
    ids = {e["id"] for e in bundle.data["entries"]}
    assert ids == {r["id"] for r in rows[3:]}
    assert bundle.data["tiers"]["left_out"] == {"draft": 2}
    assert bundle.data["tiers"]["ambiguous"] == [rows[2]["id"]]
    assert any("2 draft and 1 ambiguous left out" in n for n in bundle.data["notes"])
    wide = export_bundle(tiered, case.runs, chunks=case.chunks, n_resamples=200, tiers="gold,draft")
    assert len(wide.data["entries"]) == len(rows) - 1
