"""Judge guards: length bias, same-family judging, adjudicated few-shot examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.cache import RequestCache
from assay.chat import ChatClient
from assay.dataset import Dataset, Entry
from assay.errors import DataError
from assay.judge.llm import LLMJudge, length_bias, load_fewshot, model_family
from assay.runs.model import Run


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt-4o-mini", "gpt"),
        ("o3-mini", "gpt"),
        ("meta-llama/Llama-3.1-70B-Instruct", "llama"),
        ("claude-3-5-sonnet-20241022", "claude"),
        ("mixtral-8x7b", "mistral"),
        ("Qwen2.5-72B", "qwen"),
        ("my-house-model", "my"),
    ],
)
def test_model_family(name: str, family: str) -> None:
    assert model_family(name) == family


def test_length_bias_is_flagged_only_when_the_rate_follows_length() -> None:
    rows = [{"id": f"s{i}", "q": True} for i in range(12)]
    rows += [{"id": f"l{i}", "q": i < 2} for i in range(12)]
    lengths = {**{f"s{i}": 10 for i in range(12)}, **{f"l{i}": 200 for i in range(12)}}
    out = length_bias(rows, lengths, "q")
    assert out["flag"] and out["p"] < 0.001
    short, _, long_ = out["bins"]
    assert (short["rate"], long_["rate"], long_["n"]) == (1.0, 2 / 12, 12)
    even = [{"id": r["id"], "q": int(r["id"][1:]) % 2 == 0} for r in rows]
    assert not length_bias(even, lengths, "q")["flag"]
    # scipy's Fisher exact test decides
    from scipy.stats import fisher_exact

    assert out["p"] == pytest.approx(fisher_exact([[12, 0], [2, 10]])[1])


def _fewshot(path: Path) -> Path:
    rows = [
        {"id": "x1", "query": "Acme FY2023 capex?", "answer": "Capex was $75 million.",
         "verdicts": {"correct": "fail", "complete": "pass", "faithful": "pass", "policy": "pass"},
         "critiques": {"correct": "The FY2022 figure, not FY2023."}, "split": "judge-fewshot"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_fewshot_examples_reach_the_prompt_and_the_identity(tmp_path: Path) -> None:
    shots = load_fewshot(_fewshot(tmp_path / "fs.jsonl"))
    assert shots[0].verdicts == {"matches_reference": False, "supported": True}
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content)["messages"][-1]["content"])
        return httpx.Response(
            200,
            json={"choices": [{"message": {"content": '{"verdict": "yes", "critique": "ok."}'}}]},
        )

    client = ChatClient(
        "http://judge.test/v1", "gpt-4o", transport=httpx.MockTransport(handler),
        cache=RequestCache(tmp_path / "c.sqlite", namespace="j"),
    )  # fmt: skip
    plain, taught = LLMJudge(client), LLMJudge(client, fewshot=shots)
    assert plain.identity_hash != taught.identity_hash
    from assay.judge.llm import JudgeInput

    taught.judge(JudgeInput(question="q", answer="a", reference="r"))
    assert any("The FY2022 figure, not FY2023." in m and '"verdict": "no"' in m for m in seen)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "q", "answer": "a", "verdicts": {"correct": 3}}) + "\n")
    with pytest.raises(DataError, match=r"bad\.jsonl:1: verdicts\.correct"):
        load_fewshot(bad)


def test_judge_run_flags_same_family_and_length_bias(tmp_path: Path) -> None:
    from assay.judge.llm import judge_run

    def handler(request: httpx.Request) -> httpx.Response:
        user = json.loads(request.content)["messages"][-1]["content"]
        answer = user.split("\nANSWER: ")[-1].split("\n\nYES/NO")[0]
        verdict = "yes" if len(answer.split()) < 20 else "no"  # a judge that hates long answers
        return httpx.Response(
            200,
            json={
                "choices": [
                    {"message": {"content": json.dumps({"verdict": verdict, "critique": "x."})}}
                ]
            },
        )

    client = ChatClient(
        "http://judge.test/v1", "gpt-4o", transport=httpx.MockTransport(handler),
        cache=RequestCache(tmp_path / "c.sqlite", namespace="j"),
    )  # fmt: skip
    entries = [
        Entry.model_validate(
            {"id": f"e{i}", "query": "q", "category": "c", "reference_answer": "r"}
        )
        for i in range(24)
    ]
    rows: list[dict[str, Any]] = []
    for i in range(24):
        answer = "Short answer." if i < 12 else " ".join(["long"] * 120)
        rows.append({"id": f"e{i}", "retrieved": [], "answer": answer,
                     "cost": {"model": "gpt-4o-mini", "total_tokens": 10}})  # fmt: skip
    report = judge_run(Dataset(entries), Run.from_rows(rows), LLMJudge(client), uncalibrated=True)
    guards = report.meta["guards"]
    assert guards["same_family"]["flag"] and guards["same_family"]["judge_family"] == "gpt"
    assert any(g["flag"] for g in guards["length"])
    text = " ".join(report.warnings)
    assert "same-family judging" in text and "length bias" in text
