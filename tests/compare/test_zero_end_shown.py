"""A clustered CI whose end on 0's side is put just past 0 (p < alpha while the t approximation
leaned the other way) excludes 0, and no format prints that end as ``+0.000``/``-0.000``, which
reads as touching 0: the table, Markdown and HTML show ``>0``/``<0`` and say so in the key;
JSON keeps the number."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import write_case
from typer.testing import CliRunner

import assay.cli.stats_cmds  # noqa: F401
from assay.cli import app
from assay.compare.render import ROUNDS_TO_ZERO, cluster_line, delta_ci_words, zero_key
from assay.explorer.site import _delta
from assay.report.interval import fmt_end
from assay.stats.clusters import ClusterSummary

# 7 clusters of 3 (metadata.fact_id); one entry of each goes from one piece of two to both
# (recall@5 +0.5, complete@5 0 -> 1): all 7 clusters move up, exact sign-flip p = 2/128
UP = {"x": [(1, 2), (2, 2), (2, 2)] * 7}
FLAGS = ["--cluster", "metadata.fact_id", "--permutations", "200", "--resamples", "200"]
TOUCHING = re.compile(r"[\[,] ?[+-]0\.000\b(?!\d)")


def test_fmt_end_marks_an_end_past_0_that_rounds_to_it() -> None:
    assert fmt_end(5e-324) == ">0" and fmt_end(-5e-324) == "<0"
    assert fmt_end(0.0004) == ">0" and fmt_end(-0.0004, 3) == "<0"
    assert fmt_end(0.0) == "+0.000"  # an end at 0 touches it
    assert fmt_end(0.0006) == "+0.001" and fmt_end(-0.25) == "-0.250"


def _run(args: list[str], code: int = 0) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, res.output
    return res.output


@pytest.mark.parametrize("swap", [False, True], ids=["up", "down"])
def test_compare_never_prints_a_rejecting_end_as_zero(tmp_path: Path, swap: bool) -> None:
    ds, base, cand = write_case(tmp_path, UP)
    if swap:
        base, cand = cand, base
    mark = "<0]" if swap else "[>0,"
    pair = [str(ds), str(base), str(cand), "--no-record", *FLAGS]
    data = json.loads(_run(["compare", *pair, "-f", "json"]))
    cell = data["overall"]["metrics"]["recall@5"]
    delta = cell["delta"]
    assert cell["p"] < 0.05
    end = delta["high"] if swap else delta["low"]
    assert end != 0.0 and abs(end) < 5e-4  # JSON keeps the number, just past 0
    for fmt in ("table", "markdown"):
        text = _run(["compare", *pair, "-f", fmt])
        assert mark in text and not TOUCHING.search(text), text
        assert " ".join(text.split()).count(ROUNDS_TO_ZERO) == 1
    # the leaderboard (a third run) and the gate print the same cells
    twin = tmp_path / "twin.jsonl"
    twin.write_bytes(cand.read_bytes())
    board = [str(ds), str(base), str(cand), str(twin), "--no-record", *FLAGS]
    for fmt in ("table", "markdown"):
        text = _run(["compare", *board, "--metrics", "recall@5", "-f", fmt])
        assert mark in text and not TOUCHING.search(text), text
        assert " ".join(text.split()).count(ROUNDS_TO_ZERO) == 1
    gate = ["gate", str(ds), str(base), str(cand), "--metric", "recall@5", "--max-drop", "1"]
    for fmt in ("table", "markdown"):
        text = _run([*gate, "--no-record", *FLAGS, "-f", fmt], code=0)
        assert mark in text and not TOUCHING.search(text), text
        assert " ".join(text.split()).count(ROUNDS_TO_ZERO) == 1


def test_the_explorer_shows_the_mark_and_its_key() -> None:
    assert _delta({"value": 0.5, "low": 5e-324, "high": 0.69}) == "+0.500 [>0, +0.690]"
    assert _delta({"value": -0.5, "low": -0.69, "high": -5e-324}) == "-0.500 [-0.690, <0]"
    assert zero_key([{"low": 5e-324, "high": 0.69}]) == [ROUNDS_TO_ZERO]
    assert zero_key([{"low": 0.0, "high": 0.69}, None]) == []  # an end at 0 needs no key
    summary = ClusterSummary(field="doc", entries=21, clusters=7, largest=3)
    assert ROUNDS_TO_ZERO not in cluster_line(summary)  # the key is said once, where needed
    assert ROUNDS_TO_ZERO not in delta_ci_words(
        {"confidence": 0.95, "clustering": summary.to_dict()}
    )


def test_the_explorer_comparison_page_shows_the_mark_and_its_key(tmp_path: Path) -> None:
    import html

    from assay.explorer import export_bundle, render_site

    ds, base, cand = write_case(tmp_path, UP)
    # a chunk table holding every chunk the runs retrieve (the pieces and the noise)
    ids = [f"x-{i:03d}-{p}" for i in range(len(UP["x"])) for p in "ab"]
    ids += [f"noise-{j}" for j in range(6)]
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        "".join(
            json.dumps({"chunk_id": c, "doc_id": "d", "page": 1, "text": f"text of {c}"}) + "\n"
            for c in ids
        )
    )
    b = export_bundle(
        ds, [base, cand], chunks=chunks, cluster="metadata.fact_id", n_resamples=200,
        n_permutations=200,
    )  # fmt: skip
    site = render_site(b, tmp_path / "site").index.parent
    page = next(site.glob("compare-*.html"))
    text = html.unescape(re.sub(r"\s+", " ", page.read_text()))
    assert "[>0," in text and not TOUCHING.search(text)
    assert text.count(ROUNDS_TO_ZERO) == 1
