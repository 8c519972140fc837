"""Policy entries in the explorer: the principal who asks, and the chunks they may not see that a
run retrieved or cited, shown in red with their access labels."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.explorer import entry_filenames, export_bundle, render_site
from assay.runs import write_run

FAST = {"n_resamples": 200, "n_permutations": 200}

DEAL = {"groups": ["deal:ACME"], "label": "ACME deal room", "escalate_from": "internal"}
DRAFT = {"clearance": "insider", "public_from": "2024-02-01", "label": "draft 8-K"}
CHUNKS = [
    ("acme-10k/1/1", "acme-10k", "Acme net revenue was $1,204 million in fiscal 2023.", None),
    ("acme-10k/2/1", "acme-10k", "Acme operating margin was 14.2% in fiscal 2023.", None),
    ("acme-deal/1/1", "acme-deal", "Project Falcon: Acme to buy Beta for $610 million.", DEAL),
    ("acme-8k/1/1", "acme-8k", "Draft 8-K: Acme's CFO resigns effective March 1.", DRAFT),
]
OUTSIDER = {"role": "outsider", "clearance": "internal"}
INSIDER = {"role": "deal team", "groups": ["deal:ACME"], "clearance": "internal"}
ENTRIES: list[dict[str, Any]] = [
    {  # asked by someone outside the deal team: the deal room is closed to them
        "id": "out",
        "query": "What was Acme's net revenue in fiscal 2023?",
        "category": "policy",
        "as_of": "2024-01-15",
        "principal": OUTSIDER,
        "evidence_paths": [[["acme-10k/1/1"]]],
        "reference_answer": "$1,204 million.",
    },
    {  # the same question from the deal team, who may see the deal room (not the draft yet)
        "id": "in",
        "query": "What was Acme's net revenue in fiscal 2023?",
        "category": "policy",
        "as_of": "2024-01-15",
        "principal": INSIDER,
        "evidence_paths": [[["acme-10k/1/1"]]],
        "reference_answer": "$1,204 million.",
    },
    {  # the public after the draft's acceptance: the 8-K is public by then, the deal room not
        "id": "later",
        "query": "What was Acme's operating margin in fiscal 2023?",
        "category": "lookup",
        "as_of": "2024-03-01",
        "evidence_paths": [[["acme-10k/2/1"]]],
    },
]
HITS = {  # the pipeline that honours the labels, and the leaky one that ignores them
    "acl": {
        "out": ["acme-10k/1/1", "acme-10k/2/1"],
        "in": ["acme-10k/1/1", "acme-deal/1/1"],
        "later": ["acme-10k/2/1", "acme-8k/1/1"],
    },
    "leaky": {
        "out": ["acme-deal/1/1", "acme-10k/1/1", "acme-10k/2/1", "acme-8k/1/1"],
        "in": ["acme-10k/1/1", "acme-deal/1/1", "acme-8k/1/1"],
        "later": ["acme-10k/2/1", "acme-8k/1/1", "acme-deal/1/1"],
    },
}
EXPECTED = {  # the leaked chunks, retrieved at any rank or cited
    "acl": {"out": [], "in": [], "later": []},
    "leaky": {
        "out": ["acme-deal/1/1", "acme-8k/1/1"],
        "in": ["acme-8k/1/1"],  # the deal team is not an insider before acceptance
        "later": ["acme-deal/1/1"],  # the 8-K is public from 2024-02-01
    },
}


@pytest.fixture
def case(tmp_path: Path) -> dict[str, Any]:
    chunks = tmp_path / "chunks.jsonl"
    with open(chunks, "w", encoding="utf-8") as fh:
        for cid, doc, text, access in CHUNKS:
            row: dict[str, Any] = {"chunk_id": cid, "doc_id": doc, "pages": [1], "text": text}
            if access is not None:
                row["access"] = access
            fh.write(json.dumps(row) + "\n")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES), encoding="utf-8")
    runs = []
    for name, hits in HITS.items():
        rows = []
        for e in ENTRIES:
            row = {
                "id": e["id"],
                "retrieved": [
                    {"chunk_id": c, "score": 9.0 - i} for i, c in enumerate(hits[e["id"]])
                ],
                "answer": "$1,204 million [acme-10k/1/1].",
                "citations": ["acme-10k/1/1"],
            }
            if name == "leaky" and e["id"] == "out":  # also cites the deal room
                row["answer"] = "$1,204 million; Beta for $610 million [acme-deal/1/1]."
                row["citations"] = ["acme-deal/1/1"]
            rows.append(row)
        path = tmp_path / f"{name}.jsonl"
        write_run(path, rows)
        runs.append(path)
    return {"golden": golden, "chunks": chunks, "runs": runs, "dir": tmp_path}


def test_bundle_names_leaked_chunks_with_their_labels(case: dict[str, Any]) -> None:
    data = export_bundle(case["golden"], case["runs"], chunks=case["chunks"], **FAST).data
    by_id = {e["id"]: e for e in data["entries"]}
    assert by_id["out"]["principal"] == {"role": "outsider", "groups": [], "clearance": "internal"}
    assert by_id["later"]["principal"] is None
    for run, want in EXPECTED.items():
        for eid, leaked in want.items():
            assert by_id[eid]["runs"][run]["leaked"] == leaked, (run, eid)
    # each leaked chunk is in the bundle with its access label
    text = data["chunk_text"]
    assert text["acme-deal/1/1"]["access"]["label"] == "ACME deal room"
    assert text["acme-deal/1/1"]["access"]["groups"] == ["deal:ACME"]
    assert text["acme-8k/1/1"]["access"]["public_from"] == "2024-02-01"
    assert "access" not in text["acme-10k/1/1"]  # a public chunk carries none


def test_the_leaks_are_what_the_leak_check_counts(case: dict[str, Any]) -> None:
    """The bundle's leaked chunks agree with `assay check --checks leak` entry by entry (the
    check also counts figures of the answer only a restricted chunk states)."""
    data = export_bundle(case["golden"], case["runs"], chunks=case["chunks"], **FAST).data
    for run in case["runs"]:
        res = CliRunner().invoke(
            app,
            [
                "check",
                str(case["golden"]),
                str(run),
                "--chunks",
                str(case["chunks"]),
                "--checks",
                "leak",
                "-f",
                "json",
            ],
        )
        assert res.exit_code == 0, res.output
        rows = {r["id"]: r for r in json.loads(res.stdout)["rows"]}
        for e in data["entries"]:
            shown = e["runs"][run.stem]["leaked"]
            counted = rows[e["id"]]["leak"]
            notes = " ".join(rows[e["id"]]["notes"])
            assert counted >= len(shown) and (counted > 0) == bool(shown)
            assert all(c in notes for c in shown)
    # the leaky outsider also states a figure only the deal room states
    out = {r["id"]: r for r in json.loads(res.stdout)["rows"]}["out"]
    assert out["leak"] == 3 and "610" in " ".join(out["notes"])


def _page(site: Path, eid: str) -> str:
    return (site / entry_filenames([e["id"] for e in ENTRIES])[eid]).read_text()


def _run_section(page: str, run: str) -> str:
    return page.split(f"<h3>{run} ")[1].split("</section>")[0]


def test_site_shows_leaked_chunks_in_red_with_their_labels(
    case: dict[str, Any], tmp_path: Path
) -> None:
    bundle = export_bundle(case["golden"], case["runs"], chunks=case["chunks"], **FAST)
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    page = _page(site, "out")
    assert "outsider · clearance internal" in html.unescape(page)
    leaky, acl = _run_section(page, "leaky"), _run_section(page, "acl")
    assert "leaked: 2 chunk(s) outsider may not see as of 2024-01-15" in leaky
    # the leaked hits are marked, with the label in words and its rule
    hits = re.findall(r'<li class="hit[^"]*">.*?</li>', leaky, flags=re.S)
    leaked_hits = [h for h in hits if 'class="hit leaked"' in h or 'class="hit gold leaked"' in h]
    assert len(leaked_hits) == 2
    assert "acme-deal/1/1" in leaked_hits[0] and "acme-8k/1/1" in leaked_hits[1]
    assert (
        '<span class="leakmark">leaked · ACME deal room · groups deal:ACME</span>'
        in (leaked_hits[0])
    )
    assert "leaked · draft 8-K · clearance insider · public from 2024-02-01" in leaked_hits[1]
    assert '<code class="leaked">acme-deal/1/1</code>' in leaky  # the leaked citation
    assert "leaked" not in acl and "leakmark" not in acl
    # the deal team sees its own deal room: labelled, not red
    inside = _run_section(_page(site, "in"), "acl")
    assert '<span class="accessmark">ACME deal room · groups deal:ACME</span>' in inside
    assert "leakmark" not in inside
    # after acceptance the draft is public: only the deal room leaks
    later = _run_section(_page(site, "later"), "leaky")
    assert "leaked: 1 chunk(s) the public may not see" in later
    assert later.count('class="hit leaked"') == 1
    # the list of entries counts the leaks per run
    rows = (site / "entries.html").read_text()
    out_row = rows.split('href="entries/out.html"')[1].split("</tr>")[0]
    assert out_row.count('<span class="leak">leaked 2</span>') == 1
    in_row = rows.split('href="entries/in.html"')[1].split("</tr>")[0]
    assert '<span class="leak">leaked 1</span>' in in_row
    css = (site / "assets" / "style.css").read_text()
    assert re.search(r"li\.hit\.leaked \{[^}]*var\(--fail\)", css)


def test_a_compared_count_says_its_test(case: dict[str, Any], tmp_path: Path) -> None:
    """The leak count's p is the one-sided sign test's, clustered or not: the comparison page
    says so in the words of `assay compare`'s report."""
    metrics = ["complete@5", "leak"]
    bundle = export_bundle(
        case["golden"], case["runs"], chunks=case["chunks"], metrics=metrics, **FAST
    )
    cmp = bundle.data["comparisons"]["leaky"]["overall"]["metrics"]
    assert list(cmp["leak"]["tests"]) == ["sign_test_worse"]
    site = Path(render_site(bundle, tmp_path / "site").out_dir)
    text = " ".join(
        html.unescape(re.sub(r"<[^>]+>", " ", (site / "compare-leaky.html").read_text())).split()
    )
    assert (
        "Counts (leak): exact one-sided sign test, entries that moved the harmful way against "
        "those that moved the other way (a fall is never evidence of harm)."
    ) in text
