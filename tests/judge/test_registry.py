"""Answer checks are registered functions over one shared context; `assay check --checks a,b`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.judge.test_checks import _write
from typer.testing import CliRunner

import assay.cli
import assay.cli.judge_cmds
import assay.judge.context
from assay.corpus import load_chunks
from assay.dataset import Entry, load_dataset
from assay.errors import UsageError
from assay.judge import (
    CHECK_NAMES,
    CheckContext,
    Outcome,
    check,
    check_entry,
    check_names,
    check_run,
    get_check,
    resolve_checks,
    unregister,
)
from assay.report import Report
from assay.runs import load_run

BUILT_IN = (
    "numeric_correct",
    "key_fact_recall_full",
    "contradiction_free",
    "answer_correct",
    "refusal_ok",
    "answered_when_should_abstain",
    "abstained_when_should_answer",
    "not_disclosed_unsupported",
    "numbers_verified",
    "fiscal_year_ok",
    "polarity_correct",
    "acknowledges_gap",
    "clarify_ok",
    "premise_corrected",
)


def entry(**kw: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "What was FY2018 capex (in USD millions)?",
        "category": "lookup",
        "reference_answer": "$1,577 million",
    }
    return Entry.model_validate({**base, **kw})


@pytest.fixture()
def cites_something() -> Iterator[str]:
    """A check added the way a contributor adds one: one decorated function."""

    @check("cites_something", default=False)
    def _cites(ctx: CheckContext) -> Outcome | None:
        """The answer cites at least one chunk (abstains on refusals)."""
        if ctx.refused:
            return None
        return Outcome(bool(ctx.citations), () if ctx.citations else ("cites nothing",))

    yield "cites_something"
    unregister("cites_something")


def test_the_default_set_is_the_built_in_checks_in_order() -> None:
    assert CHECK_NAMES == BUILT_IN == check_names(default_only=True, group="answer")
    assert [c.name for c in resolve_checks(None)] == list(BUILT_IN)
    assert {get_check(n).group for n in check_names(default_only=True)} >= {"answer", "policy"}


def test_the_default_set_follows_the_groups_that_apply_to_the_dataset() -> None:
    from assay.dataset import Dataset
    from assay.judge import check_group, check_groups, default_checks_for
    from assay.judge.registry import _GROUPS
    from assay.judge.registry import RegistryError as Err

    plain = Dataset([entry()])
    assert default_checks_for(plain) == list(BUILT_IN)
    asked = entry(id="e2", principal={"role": "outsider"})
    refuse = entry(id="e3", answerable=False, expected_behavior="refuse")
    policy = ["leak", "policy_ok", "overall_pass"]
    for ds in (Dataset([entry(), asked]), Dataset([refuse])):
        got = default_checks_for(ds)
        assert [n for n in got if n in policy] == policy and set(BUILT_IN) <= set(got)
    # an entry that only abstains ("not in the filings") is no policy entry
    assert default_checks_for(Dataset([entry(answerable=False)])) == list(BUILT_IN)
    assert [g.name for g in check_groups()][:3] == ["answer", "conversation", "policy"]
    # a group is declared once, and a check must name a declared group
    with pytest.raises(Err, match="already declared"):
        check_group("policy", applies=lambda e: True)
    with pytest.raises(Err, match="not declared"):
        check("in_no_group", group="nowhere")(lambda ctx: None)
    # a new group joins the default set where it applies, and only there
    check_group("long_query", applies=lambda e: len(e.query) > 60)

    @check("query_is_long", group="long_query")
    def _long(ctx: CheckContext) -> bool:
        return True

    try:
        assert "query_is_long" not in default_checks_for(plain)
        long = entry(
            id="e4", query="What was the capital expenditure in fiscal 2018, in USD millions?"
        )
        assert default_checks_for(Dataset([long]))[-1] == "query_is_long"
    finally:
        unregister("query_is_long")
        del _GROUPS["long_query"]
    assert get_check("numbers_verified").description.startswith("Every figure of the answer")


def test_a_registered_check_runs_by_name_and_stays_out_of_the_default_set(
    cites_something: str,
) -> None:
    assert cites_something in check_names() and cites_something not in CHECK_NAMES
    res = check_entry(entry(), "Capex was $1,577 million.", checks=[cites_something])
    assert res.values == {cites_something: False} and res.notes == ["cites nothing"]
    res = check_entry(
        entry(), "Capex was $1,577 million.", citations=["c1"], checks="cites_something"
    )
    assert res.values == {cites_something: True}
    assert check_entry(entry(), "I cannot answer.", checks=[cites_something]).values == {
        cites_something: None
    }
    with pytest.raises(ValueError, match="already registered"):
        check(cites_something)(lambda ctx: True)


def test_a_check_may_reuse_another_checks_value() -> None:
    @check("correct_and_cited", default=False)
    def _both(ctx: CheckContext) -> bool | None:
        ok = ctx.result("answer_correct")
        return None if ok is None else ok and bool(ctx.citations)

    try:
        chunks = {"c1": "Capex was $1,577 million in FY2018."}
        res = check_entry(
            entry(), "Capex was $1,577 million.", citations=["c1"], chunk_text=chunks,
            checks="answer_correct,correct_and_cited",
        )  # fmt: skip
        assert res.values == {"answer_correct": True, "correct_and_cited": True}
    finally:
        unregister("correct_and_cited")


def test_the_shared_context_reads_the_answer_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str | None] = []
    real = assay.judge.context.detect_refusal

    def counting(answer: str | None) -> Any:
        calls.append(answer)
        return real(answer)

    monkeypatch.setattr(assay.judge.context, "detect_refusal", counting)
    res = check_entry(entry(), "Capex was $1,577 million.", chunk_text={}, citations=["x"])
    assert len(res.values) == len(BUILT_IN) and calls == ["Capex was $1,577 million."]


def test_a_check_returning_something_else_is_a_clear_error() -> None:
    @check("bad_return", default=False)
    def _bad(ctx: CheckContext) -> Any:
        return 0.5

    try:
        with pytest.raises(TypeError, match="bad_return"):
            check_entry(entry(), "x", checks=["bad_return"])
    finally:
        unregister("bad_return")


def test_unknown_check_names_list_the_registered_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown answer check 'nope'.*numbers_verified"):
        resolve_checks("answer_correct,nope")
    with pytest.raises(UsageError, match="no check named"):
        resolve_checks(" , ")


def test_a_subset_gives_the_same_rates_as_the_full_run(tmp_path: Path) -> None:
    ds, run, ch = _write(tmp_path)
    args = (load_dataset(ds), load_run(run))
    full = check_run(*args, chunks=load_chunks(ch), rng=np.random.default_rng(3), n_boot=100)
    sub = check_run(
        *args,
        chunks=load_chunks(ch),
        rng=np.random.default_rng(3),
        n_boot=100,
        checks="numbers_verified,answer_correct",
    )
    assert sub.checks == ["numbers_verified", "answer_correct"]
    for cat, cells in sub.rates.items():
        assert set(cells) == {"numbers_verified", "answer_correct"}
        for name, cell in cells.items():
            assert cell == full.rates[cat][name]
    assert [d["id"] for d in sub.disagreements] == [d["id"] for d in full.disagreements]


def test_check_report_is_a_report(tmp_path: Path) -> None:
    ds, run, ch = _write(tmp_path)
    rep = check_run(load_dataset(ds), load_run(run), chunks=load_chunks(ch), n_boot=100)
    assert isinstance(rep, Report)
    data = json.loads(rep.to_json())
    cell = data["rates"]["lookup"]["answer_correct"]
    assert cell["rate"] == 0.5 and cell["n"] == 2 and cell["passed"] == 1
    assert set(cell["interval"]) == {"value", "low", "high", "level", "method", "note"}
    assert cell["interval"]["value"] == 0.5 and cell["interval"]["level"] == 0.95
    # both answered entries cite one document: clustered by it (the default), one cluster gives
    # no interval; read as independent entries, the cell's interval carries no note
    one = data["rates"]["overall"]["numeric_correct"]
    assert one["n"] == 2 and one["interval"]["note"] == "one cluster: no interval"
    flat = check_run(
        load_dataset(ds), load_run(run), chunks=load_chunks(ch), n_boot=100, cluster=None
    )
    flat_one = json.loads(flat.to_json())["rates"]["overall"]["numeric_correct"]
    assert flat_one["n"] == 2 and flat_one["interval"]["note"] is None
    abst = data["rates"]["unanswerable"]["numeric_correct"]
    assert abst["rate"] is None and abst["interval"]["value"] is None
    assert "abstained" in abst["interval"]["note"]
    assert "| category |" in rep.to_markdown()
    assert rep.to_table() is not None


def test_check_cli_subset_formats_and_unknown_names(tmp_path: Path, cites_something: str) -> None:
    ds, run, ch = _write(tmp_path)
    runner = CliRunner()
    base = ["check", str(ds), str(run), "--chunks", str(ch), "--n-boot", "100"]
    res = runner.invoke(
        assay.cli.app, [*base, "--checks", "answer_correct,cites_something", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["checks"] == ["answer_correct", "cites_something"]
    assert set(data["rows"][0]) >= {"answer_correct", "cites_something"}
    assert "numbers_verified" not in data["rows"][0]
    out = tmp_path / "rows.jsonl"
    res = runner.invoke(
        assay.cli.app, [*base, "--checks", "answer_correct,nope", "--out", str(out)]
    )
    assert res.exit_code == 2 and not out.exists() and res.stdout == ""
    assert "unknown answer check 'nope'" in res.output and "numbers_verified" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(assay.cli.app, [*base, "-f", "table"])
    assert res.exit_code == 0 and "faithful but wrong" in res.stdout
    for name in BUILT_IN[:3]:
        assert name.replace("_", " ").split()[0] in res.stdout
