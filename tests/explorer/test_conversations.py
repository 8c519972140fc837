"""The explorer's conversations (issue 41): the bundle's turn references and per-conversation
roll-ups, the same numbers `assay score` and `assay check` give; the conversation page (the
turns in order, the runs side by side, a failing check marked, the turn a follow-up depends on
linked), the entries list grouping turns under their conversation; and a dataset without
conversations unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app
from assay.dataset import load_dataset, rollup
from assay.explorer import conversation_filenames, entry_filenames, export_bundle, render_site
from assay.explorer.convview import check_verdict
from assay.judge import get_check
from assay.runs import write_run

from .conftest import Case, _chunk_id, write_explorer_case

runner = CliRunner()
FAST = {"n_resamples": 200, "n_permutations": 200}

ACME = ("Acme Corp", "acme-10k", "$1,204 million", "14.2%")
BETA = ("Beta Inc", "beta-10k", "$880 million", "9.1%")


def _conversation(cid: str, co: tuple[str, str, str, str]) -> dict[str, Any]:
    name, doc, revenue, margin = co
    return {
        "id": cid,
        "category": "carried_context",
        "as_of": "2024-03-31",
        "metadata": {"company": name},
        "criteria": ["kept_context", "no_contradiction"],
        "turns": [
            {
                "query": f"What was {name}'s net revenue in fiscal 2023?",
                "evidence_paths": [[[_chunk_id(doc, 1)]]],
                "reference_answer": f"{name} net revenue was {revenue} in fiscal 2023.",
                "key_facts": [{"fact": f"net revenue in fiscal 2023: {revenue}"}],
            },
            {
                "query": "And its operating margin?",
                "depends_on": [1],
                "evidence_paths": [[[_chunk_id(doc, 2 if doc == "acme-10k" else 3)]]],
                "reference_answer": f"{name} operating margin was {margin} in fiscal 2023.",
                "key_facts": [{"fact": f"operating margin in fiscal 2023: {margin}"}],
            },
        ],
    }


def write_conversation_case(directory: Path) -> Case:
    """The explorer case's chunk table, two conversations and one plain entry, and two runs:
    ``own`` (history own) answers every turn right; ``none`` (no history) answers Acme's
    follow-up with Beta's margin (kept_context fails) and misses its evidence."""
    case = write_explorer_case(directory)
    lines = [
        _conversation("conv-acme", ACME),
        _conversation("conv-beta", BETA),
        {
            "id": "plain",
            "query": "What was Beta's headcount at year end 2023?",
            "category": "lookup",
            "evidence_paths": [[[_chunk_id("beta-10k", 2)]]],
        },
    ]
    case.dataset.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ds = load_dataset(case.dataset)
    gold = {e.id: e.evidence_paths[0][0][0] for e in ds.entries}
    runs = []
    for mode in ("own", "none"):
        rows = []
        for e in ds.entries:
            hit = gold[e.id]
            answer = e.reference_answer
            if mode == "none" and e.id == "conv-acme#2":
                hit, answer = _chunk_id("beta-10k", 3), "Beta Inc's operating margin was 9.1%."
            rows.append(
                {
                    "id": e.id,
                    "retrieved": [{"chunk_id": hit, "score": 1.0}],
                    "answer": answer,
                    "citations": [hit],
                }
            )
        path = directory / f"{mode}.jsonl"
        write_run(path, rows, meta={"history": mode})
        runs.append(path)
    case.runs = runs
    return case


@pytest.fixture(scope="module")
def conv_case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    return write_conversation_case(tmp_path_factory.mktemp("conv") / "case")


@pytest.fixture(scope="module")
def bundle(conv_case: Case) -> dict[str, Any]:
    return export_bundle(conv_case.dataset, conv_case.runs, chunks=conv_case.chunks, **FAST).data


@pytest.fixture(scope="module")
def site(bundle: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(render_site(bundle, tmp_path_factory.mktemp("site") / "site").out_dir)


def _cli_json(*args: str) -> dict[str, Any]:
    res = runner.invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def test_turns_carry_their_conversation_and_runs_their_history(bundle: dict[str, Any]) -> None:
    refs = {e["id"]: e.get("conversation") for e in bundle["entries"]}
    assert refs["plain"] is None and "conversation" not in bundle["entries"][-1]
    assert refs["conv-acme#2"] == {
        "id": "conv-acme", "turn": 2, "turns": 2, "depends_on": [1],
        "criteria": ["kept_context", "no_contradiction"],
    }  # fmt: skip
    assert [r["history"] for r in bundle["runs"]] == ["own", "none"]
    convs = {c["id"]: c for c in bundle["conversations"]}
    assert list(convs) == ["conv-acme", "conv-beta"]
    assert convs["conv-acme"]["turns"] == ["conv-acme#1", "conv-acme#2"]
    assert convs["conv-acme"]["follow_ups"] == ["conv-acme#2"]


def test_the_numbers_are_assay_score_and_assay_check(
    conv_case: Case, bundle: dict[str, Any]
) -> None:
    """Per turn and per conversation, the bundle's values are those the commands print: the
    check values of `assay check`'s rows, the roll-up over every conversation of `assay score`
    and `assay check`, and each conversation's roll-up `rollup` over its own turns."""
    ds = load_dataset(conv_case.dataset)
    entries = {e["id"]: e for e in bundle["entries"]}
    convs = {c["id"]: c for c in bundle["conversations"]}
    for name, path in zip(("own", "none"), conv_case.runs, strict=True):
        common = [str(conv_case.dataset), str(path), "--chunks", str(conv_case.chunks)]
        score = _cli_json("score", *common)
        check = _cli_json("check", *common)
        assert bundle["scores"][name]["conversations"] == score["conversations"]
        assert bundle["checks"][name]["conversations"] == check["conversations"]
        assert {"kept_context", "no_contradiction"} <= set(check["checks"])
        rows = {r["id"]: r for r in check["rows"]}
        for eid, row in rows.items():
            shown = entries[eid]["runs"][name]["checks"]
            assert {k: v for k, v in row.items() if k not in ("id", "category")} == shown
        for cid, conv in convs.items():
            ids = conv["turns"]
            turns = [e for e in ds.entries if e.id in ids]
            cols = {c: [rows[i].get(c) for i in ids] for c in check["checks"]}
            binary = [c for c in check["checks"] if isinstance(cols[c][0], bool | None)]
            failing = [c for c in binary if not get_check(c).higher_is_better]
            want = rollup(ids, cols, turns, binary=binary, failures=failing)
            assert want is not None
            got = conv["runs"][name]["checks"]
            assert got == {k: v for k, v in want.values.items() if v["n"]}, cid
            metric = [entries[i]["runs"][name]["metrics"]["complete@5"] for i in ids]
            assert conv["runs"][name]["metrics"]["complete@5"]["mean"] == sum(metric) / len(ids)
        # the mean over conversations of each conversation's mean is `assay score`'s roll-up
        per = [c["runs"][name]["metrics"]["recall@5"]["mean"] for c in convs.values()]
        assert sum(per) / len(per) == pytest.approx(
            score["conversations"]["scores"]["recall@5"]["mean"]
        )


def test_a_conversation_fails_where_a_turn_fails(bundle: dict[str, Any]) -> None:
    convs = {c["id"]: c for c in bundle["conversations"]}
    acme = convs["conv-acme"]["runs"]
    assert acme["own"]["status"] == "pass" and acme["none"]["status"] == "fail"
    assert acme["own"]["verdicts"]["kept_context"] == "pass"
    assert acme["none"]["verdicts"]["kept_context"] == "fail"
    assert acme["none"]["checks"]["kept_context"] == {
        "every_turn": 0.0,
        "mean": 0.0,
        "n": 1,
        "passed": 0,
    }
    assert acme["none"]["metrics"]["complete@5"]["every_turn"] == 0.0
    assert convs["conv-beta"]["runs"]["none"]["status"] == "pass"


def test_a_check_verdict_reads_its_polarity() -> None:
    assert check_verdict("kept_context", [None, True]) == "pass"
    assert check_verdict("kept_context", [True, False]) == "fail"
    assert check_verdict("kept_context", [None, None]) == "abstain"
    # an error check: True is the error
    assert check_verdict("abstained_when_should_answer", [False, False]) == "pass"
    assert check_verdict("abstained_when_should_answer", [False, True]) == "fail"
    assert check_verdict("key_fact_recall", [0.5]) is None  # not pass/fail


def test_the_conversation_page(site: Path, bundle: dict[str, Any]) -> None:
    html = (site / conversation_filenames(["conv-acme"])["conv-acme"]).read_text()
    # the turns in order, each with its question, the follow-up linked to the turn it needs
    first = html.index('id="turn-1"')
    second = html.index('id="turn-2"')
    assert first < html.index("What was Acme Corp&#39;s net revenue") < second
    assert second < html.index("And its operating margin?")
    assert re.search(r'follows <a href="#turn-1">turn 1</a>', html)
    # the runs side by side on each turn, with the history each was given
    assert html.count('<section class="run" data-run="own">') == 2
    assert html.count('<section class="run" data-run="none">') == 2
    assert "<b>none</b> (history: none)" in html
    # the failing check marked on the turn, and in the roll-up
    turn2 = html[second:]
    none_col = turn2[turn2.index('data-run="none"') :]
    assert re.search(r"<td>kept_context</td><td class=\"check bad\">fail</td>", none_col)
    own_col = turn2[turn2.index('data-run="own"') : turn2.index('data-run="none"')]
    assert re.search(r"<td>kept_context</td><td class=\"check good\">pass</td>", own_col)
    row = re.search(r'<tr data-score="kept_context">.*?</tr>', html, re.S)
    assert row is not None
    cells = re.findall(r'<td class="roll([^"]*)">([^<]*)', row.group(0))
    assert cells[0][0] == " good" and "every turn passes" in cells[0][1]
    assert cells[1][0] == " bad" and "0.000 · fails at turn 2" in cells[1][1]


def test_the_entries_list_groups_turns_and_filters_by_conversation_check(
    site: Path, bundle: dict[str, Any]
) -> None:
    html = (site / "entries.html").read_text()
    files = entry_filenames([e["id"] for e in bundle["entries"]])
    head = html.index('<tr class="conv" data-conv="conv-acme"')
    t1 = html.index(f'<a href="{files["conv-acme#1"]}">')
    t2 = html.index(f'<a href="{files["conv-acme#2"]}">')
    beta = html.index('<tr class="conv" data-conv="conv-beta"')
    assert head < t1 < t2 < beta < html.index(f'<a href="{files["plain"]}">')
    assert 'href="conversations/conv-acme.html">conversation conv-acme</a>' in html
    # the header row says per run which check fails, for the filter (run 1: none)
    tag = html[head : html.index(">", head)]
    assert 'data-check-1-kept_context="fail"' in tag and 'data-check-0-kept_context="pass"' in tag
    assert '<option value="kept_context">kept_context</option>' in html
    assert "kept_context (turn 2)" in html
    # the entry page of a turn links its conversation and the turn it follows
    page = (site / files["conv-acme#2"]).read_text()
    assert '<a class="conv-link" href="../conversations/conv-acme.html#turn-2">' in page
    assert f'<a href="../{files["conv-acme#1"]}">turn 1</a>' in page
    index = (site / "conversations.html").read_text()
    assert "every turn passes in 1 of 2" in index  # complete@5 of none: beta's only


def test_a_dataset_without_conversations_is_unchanged(tmp_path: Path) -> None:
    case = write_explorer_case(tmp_path / "case")
    data = export_bundle(case.dataset, case.runs, chunks=case.chunks, **FAST).data
    assert "conversations" not in data
    assert all("conversation" not in e for e in data["entries"])
    assert all("history" not in r for r in data["runs"])
    assert set(data["checks"]["cand"]["checks"]).isdisjoint({"kept_context", "no_contradiction"})
    site = Path(render_site(data, tmp_path / "site").out_dir)
    assert not (site / "conversations").exists() and not (site / "conversations.html").exists()
    html = (site / "entries.html").read_text()
    assert 'class="conv"' not in html and "f-check" not in html and "Conversations" not in html
