"""The production loop says what it does not know: a query the neighbours or a rule placed with
a confidence below a threshold is in an "uncertain" bucket in every table of the traffic report,
the share-vs-golden gap is over the confident placements only and says how many were uncertain,
and the threshold is an option, or chosen on the golden set by held-out accuracy, and reported.

Attack: on FinanceBench questions, 54.8% of traffic was placed by "nearest" neighbours at
confidence 0.02-0.13 and drove the gap table as if firm.

Real data: the FinanceBench dev split (skipped where absent); its even questions are the golden
set, its odd ones the traffic (new questions, whose true categories are known)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.benchmarks.financebench.importer import import_dataset
from assay.cli import app
from assay.dataset import load_dataset
from assay.logs import category_shares, ingest_logs, traffic_report
from assay.logs.classify import (
    DEFAULT_MIN_CONFIDENCE,
    UNCERTAIN,
    Classifier,
    choose_threshold,
    golden_pairs,
)
from assay.logs.store import connect

from .test_classify_financebench import FB

pytestmark = pytest.mark.skipif(
    not (FB / "questions_dev.jsonl").exists(), reason="FinanceBench dev split not present"
)


@pytest.fixture(scope="module")
def fb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(golden: the even questions, store of the odd ones asked as traffic, their categories)."""
    tmp = tmp_path_factory.mktemp("fb")
    full = tmp / "fb.jsonl"
    import_dataset(FB / "questions_dev.jsonl", out=full, documents=FB / "documents.jsonl")
    lines = full.read_text().splitlines()
    golden = tmp / "half.jsonl"
    golden.write_text("".join(x + "\n" for x in lines[0::2]))
    asked = [json.loads(x) for x in lines[1::2]]
    log = tmp / "traffic.jsonl"
    log.write_text(
        "".join(
            json.dumps({"ts": f"2026-10-{1 + i % 28:02d}T10:00:00Z", "query": e["query"]}) + "\n"
            for i, e in enumerate(asked)
        )
    )
    ingest_logs([log], tmp / "store", golden=golden, progress=False)
    return golden, tmp / "store", {e["query"]: e["category"] for e in asked}


def test_low_confidence_placements_are_uncertain_and_out_of_the_gap(
    fb: tuple[Path, Path, dict[str, str]],
) -> None:
    golden, store, truth = fb
    rep = traffic_report(store, golden=golden)
    th = rep.threshold
    assert th is not None and th.how == "held-out" and th.target == 0.8
    with connect(store) as con:
        rows = con.execute("SELECT query, category, method, confidence FROM queries").fetchall()
    unsure = [r for r in rows if r[2] in ("nearest", "rule") and r[3] < th.value]
    sure = [r for r in rows if r not in unsure]
    assert rep.uncertain == len(unsure) > 0 and rep.n == len(rows)
    # on questions whose categories are known: the uncertain bucket is where the guesses were
    right_sure = sum(truth[q] == c for q, c, _, _ in sure) / len(sure)
    right_unsure = sum(truth[q] == c for q, c, _, _ in unsure) / len(unsure)
    assert right_sure >= 0.8 > right_unsure
    # the gap is over the confident placements only; the bucket is a share of all traffic
    for cat in {c for _, c, _, _ in sure}:
        assert rep.confident_shares[cat] == pytest.approx(
            sum(c == cat for _, c, _, _ in sure) / len(sure)
        )
    assert rep.traffic_shares[UNCERTAIN] == pytest.approx(len(unsure) / len(rows))
    d = rep.to_dict()
    assert d["uncertain"]["n"] == len(unsure) and d["uncertain"]["how"] == "held-out"
    assert d["category_shares"][UNCERTAIN] == {
        "traffic": len(unsure) / len(rows),
        "confident": None,
        "golden": None,
    }
    # shown in every table: shares, how classified, per month, the month per category
    md = rep.to_markdown()
    tables = md.split("**")[1::2]
    assert tables[:4] == [
        "Category share: traffic vs golden set",
        "How queries were classified",
        "Traffic per month",
        "2026-10 per category",
    ]
    parts = md.split("**")[2::2]
    for part in parts[:4]:
        assert f"| {UNCERTAIN} |" in part
    assert f"gap: over the {len(sure)} confident placements; {len(unsure)} (" in parts[0]
    assert f"confidence < {th.value:.2f}, chosen on the golden set by held-out accuracy" in md
    # the shares the synth gap figures read are the same confident placements
    got = category_shares(store, golden=golden)
    assert got.shares == pytest.approx(rep.confident_shares)
    assert (got.n, got.uncertain, got.threshold.value) == (len(rows), len(unsure), th.value)


def test_the_threshold_is_where_held_out_accuracy_reaches_the_target(
    fb: tuple[Path, Path, dict[str, str]],
) -> None:
    golden, _store, _truth = fb
    pairs = golden_pairs(load_dataset(golden).entries)
    th = choose_threshold(pairs)
    # the held-out placements, worked out here fold by fold
    held: list[tuple[float, bool]] = []
    for f in range(5):
        clf = Classifier([p for i, p in enumerate(pairs) if i % 5 != f])
        for q, cat in pairs[f::5]:
            c = clf.classify(q)
            if c.method in ("nearest", "rule"):
                held.append((c.confidence, c.category == cat))
    above = [ok for c, ok in held if c >= th.value]
    below = [ok for c, ok in held if c < th.value]
    h = th.held_out
    assert h is not None and h["placed"] == len(held)
    assert (h["confident"], h["uncertain"]) == (len(above), len(below)) and below
    assert h["accuracy_confident"] == pytest.approx(sum(above) / len(above))
    assert sum(above) >= 0.8 * len(above)
    # the window just above the threshold reaches the target; no lower cut would
    held.sort()
    w = h["window"]
    first = next(i for i, (c, _) in enumerate(held) if c >= th.value)
    assert sum(ok for _, ok in held[first : first + w]) >= 0.8 * w
    lower = sorted({c for c, _ in held if c < th.value})
    for cut in lower:
        i = next(i for i, (c, _) in enumerate(held) if c >= cut)
        win = [ok for _, ok in held[i : i + w]]
        tail = [ok for _, ok in held[i:]]
        assert sum(win) < 0.8 * len(win) or sum(tail) < 0.8 * len(tail)
    # an unreachable target leaves every such placement uncertain; a trivial one none
    assert choose_threshold(pairs, target=1.0).value == 1.0 or all(
        ok for c, ok in held if c >= choose_threshold(pairs, target=1.0).value
    )
    assert choose_threshold(pairs, target=0.01).value == held[0][0]


def test_the_threshold_is_an_option_and_has_a_default(
    fb: tuple[Path, Path, dict[str, str]],
) -> None:
    golden, store, _truth = fb
    runner = CliRunner()
    res = runner.invoke(
        app, ["logs", "report", str(store), "--golden", str(golden), "--min-confidence", "1",
              "-f", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)["uncertain"]
    with connect(store) as con:
        (nearest,) = con.execute(
            "SELECT count(*) FROM queries WHERE method IN ('nearest', 'rule')"
        ).fetchone()
    assert (got["how"], got["min_confidence"], got["n"]) == ("option", 1.0, nearest)
    res = runner.invoke(app, ["logs", "report", str(store), "--min-confidence", "0", "-f", "json"])
    assert json.loads(res.output)["uncertain"]["n"] == 0
    # no golden set to choose on: the default, said so
    rep = traffic_report(store)
    assert rep.threshold is not None
    assert (rep.threshold.how, rep.threshold.value) == ("default", DEFAULT_MIN_CONFIDENCE)
    assert "the default: no golden set to choose on" in rep.to_markdown()
    res = runner.invoke(app, ["logs", "report", str(store), "--min-confidence", "1.5"])
    assert res.exit_code == 2
