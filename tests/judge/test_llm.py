"""The LLM judge against a small OpenAI-protocol HTTP server started by the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import assay.cli
import assay.cli.agreement_cmds
import assay.cli.judge_cmds
from assay.cache import RequestCache
from assay.chat import ChatClient, LLMError
from assay.errors import UsageError
from assay.judge.calibrated import calibration_path, uncalibrated_warning
from assay.judge.llm import JudgeInput, JudgeSettings, LLMJudge


class FakeModel:
    """Says yes when the answer contains the reference; in pairwise mode always prefers
    position 1 when `biased`, else the answer containing the reference."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.biased = False
        self.fail = False

    def reply(self, body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        if "ANSWER 1:" in user:
            if self.biased:
                return json.dumps({"winner": "1", "critique": "The first is better. Really."})
            ref = user.split("REFERENCE ANSWER: ")[1].split("\n")[0]
            a1 = user.split("ANSWER 1: ")[1].split("\nANSWER 2:")[0]
            return json.dumps({"winner": "1" if ref in a1 else "2", "critique": "Figure."})
        ref = user.split("REFERENCE ANSWER: ")[1].split("\n")[0]
        answer = user.split("\nANSWER: ")[1].split("\n\nYES/NO")[0]
        verdict = "yes" if ref in answer else "no"
        return (
            "```json\n"
            + json.dumps(
                {"verdict": verdict, "critique": f"Checked {verdict}. Extra sentence dropped."}
            )
            + "\n```"
        )


@pytest.fixture()
def server() -> Iterator[tuple[str, FakeModel]]:
    model = FakeModel()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            model.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            if model.fail:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"boom")
                return
            out = {
                "id": "x",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": model.reply(body)},
                    }
                ],
            }
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", model
    finally:
        httpd.shutdown()
        httpd.server_close()


def client(url: str, tmp_path: Path, **kw: Any) -> ChatClient:
    return ChatClient(
        url,
        "judge-model",
        api_key="sk-test",
        cache=RequestCache(tmp_path / "c.sqlite", namespace="t"),
        **kw,
    )


ITEM = JudgeInput(
    question="FY2018 capex?",
    answer="Capex was $1,577 million.",
    reference="$1,577 million",
    answerable=True,
    as_of="2019-03-01",
    context=("Purchases of PP&E (1,577)",),
)


def test_binary_questions_are_separate_calls_with_one_sentence_critique(
    server: tuple[str, FakeModel], tmp_path: Path
) -> None:
    url, model = server
    judge = LLMJudge(client(url, tmp_path))
    out = judge.judge(ITEM)
    assert set(out) == {"supported", "matches_reference"}
    assert all(v.passed is True for v in out.values())
    assert out["supported"].critique == "Checked yes."
    assert len(model.requests) == 2
    req = model.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    user = req["body"]["messages"][-1]["content"]
    assert "AS OF: 2019-03-01" in user and "ANSWERABLE FROM THE FILINGS: yes" in user
    assert "Purchases of PP&E" in user and "score" not in user.lower()
    wrong = judge.judge(JudgeInput(question="q", answer="$9", reference="$1,577 million"))
    assert wrong["matches_reference"].passed is False


def test_every_call_goes_through_the_cache(server: tuple[str, FakeModel], tmp_path: Path) -> None:
    url, model = server
    LLMJudge(client(url, tmp_path)).judge(ITEM)
    n = len(model.requests)
    again = LLMJudge(client(url, tmp_path))  # a new client, same cache file
    assert again.judge(ITEM)["supported"].passed is True
    assert len(model.requests) == n and again.client.calls == 0
    other = LLMJudge(client(url, tmp_path), settings=JudgeSettings("judge-model", temperature=0.5))
    other.judge(ITEM)
    assert len(model.requests) == n + 2  # settings are part of the key


def test_pairwise_runs_both_orders_and_reports_position_disagreement(
    server: tuple[str, FakeModel], tmp_path: Path
) -> None:
    url, model = server
    judge = LLMJudge(client(url, tmp_path))
    fair = judge.pairwise(ITEM, "It was $1,577 million.", "It was $1,373 million.")
    assert (fair.first_order, fair.second_order) == ("a", "a")
    assert fair.winner == "a" and not fair.position_disagreement
    model.biased = True
    biased = judge.pairwise(ITEM, "It was $2 million.", "It was $3 million.")
    assert biased.position_disagreement and biased.winner == "tie"
    assert (biased.first_order, biased.second_order) == ("a", "b")


def test_identity_hash_tracks_model_prompts_and_settings(tmp_path: Path) -> None:
    c = ChatClient("http://127.0.0.1:9/v1", "m1", cache=RequestCache(enabled=False))
    base = LLMJudge(c).identity_hash
    assert LLMJudge(c).identity_hash == base
    assert LLMJudge(c, settings=JudgeSettings("m2")).identity_hash != base
    assert LLMJudge(c, settings=JudgeSettings("m1", temperature=0.2)).identity_hash != base
    assert LLMJudge(c, questions={"supported": "Other wording?"}).identity_hash != base


def test_uncalibrated_warning_until_a_calibration_file_exists(tmp_path: Path) -> None:
    h = "ab" * 32
    w = uncalibrated_warning(h, tmp_path)
    assert w is not None and "no calibration" in w and "assay judge calibrate" in w
    calibration_path(h, tmp_path).write_text("{}")  # not a calibration
    assert uncalibrated_warning(h, tmp_path) is not None
    cal = {
        "kind": "assay.judge_calibration",
        "judge_hash": "cd" * 32,
        "inputs": {"judge": {"field": "matches_reference"}},
        "overall": {"confusion": {"tp": 40, "fn": 2, "fp": 3, "tn": 30}},
    }
    calibration_path(h, tmp_path).write_text(json.dumps(cal))  # another judge's
    assert uncalibrated_warning(h, tmp_path) is not None
    counts_missing = {k: v for k, v in cal.items() if k != "overall"}
    calibration_path(h, tmp_path).write_text(json.dumps({**counts_missing, "judge_hash": h}))
    assert uncalibrated_warning(h, tmp_path) is not None  # nothing to correct with
    calibration_path(h, tmp_path).write_text(json.dumps({**cal, "judge_hash": h}))
    assert uncalibrated_warning(h, tmp_path) is None


def test_errors_are_clear(server: tuple[str, FakeModel], tmp_path: Path) -> None:
    url, model = server
    model.fail = True
    with pytest.raises(LLMError, match="HTTP 500"):
        client(url, tmp_path).complete([{"role": "user", "content": "hi"}])
    with pytest.raises(UsageError, match="ASSAY_LLM_BASE_URL"):
        ChatClient.from_env(environ={}, cache=RequestCache(enabled=False))
    with pytest.raises(UsageError, match="ASSAY_LLM_MODEL"):
        ChatClient.from_env(environ={"ASSAY_LLM_BASE_URL": url}, cache=RequestCache(enabled=False))


def _files(tmp: Path) -> tuple[Path, Path, Path, Path]:
    ds = tmp / "golden.jsonl"
    ds.write_text(
        json.dumps(
            {
                "id": "a",
                "query": "FY2018 capex?",
                "category": "lookup",
                "reference_answer": "$1,577 million",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "b",
                "query": "FY2018 OCF?",
                "category": "lookup",
                "reference_answer": "$6,439 million",
            }
        )
        + "\n"
    )
    r1, r2 = tmp / "r1.jsonl", tmp / "r2.jsonl"
    r1.write_text(
        json.dumps({"id": "a", "retrieved": ["c1"], "answer": "Capex: $1,577 million."})
        + "\n"
        + json.dumps({"id": "b", "retrieved": ["c1"], "answer": "OCF: $6,240 million."})
        + "\n"
    )
    r2.write_text(
        json.dumps({"id": "a", "retrieved": ["c1"], "answer": "Capex: $1,373 million."})
        + "\n"
        + json.dumps({"id": "b", "retrieved": ["c1"], "answer": "OCF: $6,439 million."})
        + "\n"
    )
    ch = tmp / "chunks.jsonl"
    ch.write_text(
        json.dumps(
            {
                "chunk_id": "c1",
                "doc_id": "d",
                "page": 1,
                "text": "Purchases of PP&E (1,577) (1,373)",
            }
        )
        + "\n"
    )
    return ds, r1, r2, ch


def test_judge_run_cli(
    server: tuple[str, FakeModel], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, model = server
    ds, r1, r2, ch = _files(tmp_path)
    monkeypatch.setenv("ASSAY_LLM_BASE_URL", url)
    monkeypatch.setenv("ASSAY_LLM_MODEL", "judge-model")
    monkeypatch.setenv("ASSAY_JUDGE_CALIBRATIONS", str(tmp_path / "cal"))
    cache = tmp_path / "cache.sqlite"
    out = tmp_path / "judged.jsonl"
    runner = CliRunner()
    args = ["judge", "run", str(ds), str(r1), "--chunks", str(ch), "--cache", str(cache)]
    # an uncalibrated judge does not grade: refused before any model call, nothing written
    res = runner.invoke(assay.cli.app, [*args, "--out", str(out), "--format", "json"])
    assert res.exit_code == 2 and "--uncalibrated" in res.output and "Traceback" not in res.output
    assert not out.exists() and model.requests == [] and res.stdout == ""
    res = runner.invoke(
        assay.cli.app, [*args, "--out", str(out), "--format", "json", "--uncalibrated"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["warnings"] and "no calibration" in data["warnings"][0]
    assert data["calibrated"] is False and data["corrected"] == []
    res = runner.invoke(assay.cli.app, [*args, "--uncalibrated", "-f", "markdown"])
    assert res.exit_code == 0 and "UNCALIBRATED" in res.stdout and "no calibration" in res.stdout
    assert data["rates"]["lookup"]["matches_reference"]["passed"] == 1
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    jh = data["meta"]["judge"]["hash"]
    assert {r["id"] for r in rows} == {"a", "b"} and rows[0]["judge_hash"] == jh
    assert "Purchases of PP&E" in model.requests[0]["body"]["messages"][-1]["content"]
    # the judged rows feed `assay judge calibrate`; its --out file silences the warning
    human = tmp_path / "human.jsonl"
    human.write_text(
        json.dumps({"id": "a", "pass": True}) + "\n" + json.dumps({"id": "b", "pass": False}) + "\n"
    )
    (tmp_path / "cal").mkdir()
    calibrate = [
        "judge",
        "calibrate",
        "--human",
        str(human),
        "--judge",
        str(out),
        "--judge-field",
        "matches_reference",
        "--out",
        str(tmp_path / "cal" / f"{jh}.json"),
    ]
    # two labelled items are far below the calibration bar: refused, nothing written
    res = runner.invoke(assay.cli.app, calibrate)
    assert res.exit_code == 2 and "below the calibration bar" in res.output
    assert "2 labelled items (at least 100)" in res.output
    assert not (tmp_path / "cal" / f"{jh}.json").exists()
    res = runner.invoke(assay.cli.app, [*calibrate, "--accept-weak-calibration"])
    assert res.exit_code == 0, res.output
    assert "WEAK CALIBRATION accepted" in res.output
    saved = json.loads((tmp_path / "cal" / f"{jh}.json").read_text())
    assert saved["bar"]["met"] is False and saved["bar"]["accepted_weak"] is True
    n = len(model.requests)
    run_args = ["judge", "run", str(ds), str(r1), "--cache", str(cache), "--format", "json"]
    res = runner.invoke(assay.cli.app, run_args)  # a weak calibration does not grade
    assert res.exit_code == 2 and "--accept-weak-calibration" in res.output
    res = runner.invoke(assay.cli.app, [*run_args, "--accept-weak-calibration"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["calibrated"] is True
    assert [w for w in data["warnings"] if w.startswith("WEAK CALIBRATION accepted")]
    assert data["calibration"]["accepted_weak"] is True and data["calibration"]["shortfalls"]
    assert len(model.requests) == n + 4  # no --chunks: a different prompt, so new calls
    res = runner.invoke(
        assay.cli.app,
        [
            "judge",
            "run",
            str(ds),
            str(r1),
            "--against",
            str(r2),
            "--cache",
            str(cache),
            "--format",
            "json",
            "--accept-weak-calibration",
        ],
    )
    assert res.exit_code == 0, res.output
    pair = json.loads(res.stdout)
    assert pair["meta"]["calibration"]["accepted_weak"] is True
    assert (pair["a_wins"], pair["b_wins"], pair["position_disagreements"]) == (1, 1, 0)


def test_judge_run_with_a_calibration_reports_raw_beside_corrected_rates(
    server: tuple[str, FakeModel], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`judge run --calibration FILE`: raw pass rate beside Rogan-Gladen and PPI, with intervals,
    checked against the formula and against ppi_py."""
    import numpy as np
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    url, model = server
    monkeypatch.setenv("ASSAY_LLM_BASE_URL", url)
    monkeypatch.setenv("ASSAY_LLM_MODEL", "judge-model")
    monkeypatch.setenv("ASSAY_JUDGE_CALIBRATIONS", str(tmp_path / "nowhere"))
    n = 40
    ds, run = tmp_path / "golden.jsonl", tmp_path / "run.jsonl"
    # the fake judge passes an answer that contains the reference: 26 of 40 do
    ds.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "query": f"Q{i}?", "category": "lookup",
                        "reference_answer": f"${100 + i} million"}) + "\n"
            for i in range(n)
        )
    )  # fmt: skip
    run.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "retrieved": ["c1"],
                        "answer": f"It was ${100 + i if i % 3 else 999} million."}) + "\n"
            for i in range(n)
        )
    )  # fmt: skip
    runner = CliRunner()
    judged = tmp_path / "judged.jsonl"
    res = runner.invoke(
        assay.cli.app,
        ["judge", "run", str(ds), str(run), "--uncalibrated", "--out", str(judged), "-f", "json"],
    )
    assert res.exit_code == 0, res.output
    jv = {r["id"]: r["matches_reference"] for r in map(json.loads, judged.read_text().splitlines())}
    # experts label the first 30 answers and disagree with the judge on 4 of them
    flip = {"q1", "q2", "q3", "q6"}
    human = tmp_path / "human.jsonl"
    human.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "pass": jv[f"q{i}"] != (f"q{i}" in flip)}) + "\n"
            for i in range(30)
        )
    )
    cal = tmp_path / "calib.json"
    res = runner.invoke(
        assay.cli.app,
        ["judge", "calibrate", "--human", str(human), "--judge", str(judged),
         "--judge-field", "matches_reference", "--out", str(cal), "-f", "json",
         "--accept-weak-calibration"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output  # 30 labelled items: below the bar, accepted
    assert json.loads(res.stdout)["bar"]["shortfalls"][0] == "30 labelled items (at least 100)"
    weak = ["--accept-weak-calibration"]
    res = runner.invoke(
        assay.cli.app,
        ["judge", "run", str(ds), str(run), "--calibration", str(cal), "-f", "json", *weak],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["calibrated"] is True
    assert [w[:24] for w in data["warnings"]] == ["WEAK CALIBRATION accepte"]
    assert data["calibration"]["question"] == "matches_reference"
    overall = next(c for c in data["corrected"] if c["category"] == "overall")
    ids = [f"q{i}" for i in range(30)]
    y = np.array([jv[i] != (i in flip) for i in ids], dtype=float)
    yhat = np.array([jv[i] for i in ids], dtype=float)
    u = np.array([jv[f"q{i}"] for i in range(n)], dtype=float)
    assert overall["n"] == n and overall["raw"]["value"] == pytest.approx(u.mean())
    lo, hi = overall["raw"]["low"], overall["raw"]["high"]
    assert lo < u.mean() < hi
    tpr = float(yhat[y == 1].mean())
    tnr = float((1 - yhat[y == 0]).mean())
    rg = overall["rogan_gladen"]
    assert rg["value"] == pytest.approx(min(1.0, max(0.0, (u.mean() + tnr - 1) / (tpr + tnr - 1))))
    assert rg["low"] is not None and rg["low"] <= rg["value"] <= rg["high"]
    ppi = overall["ppi"]
    assert ppi["value"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, u, lam=1)[0]))
    ref_lo, ref_hi = ppi_mean_ci(y, yhat, u, alpha=0.05, lam=1)
    assert (ppi["low"], ppi["high"]) == (
        pytest.approx(float(ref_lo[0])),
        pytest.approx(float(ref_hi[0])),
    )
    res = runner.invoke(
        assay.cli.app, ["judge", "run", str(ds), str(run), "--calibration", str(cal), *weak]
    )
    assert res.exit_code == 0 and "Rogan-Gladen" in res.stdout and "PPI" in res.stdout
    assert "WEAK" in res.stdout and "CALIBRATION accepted" in res.stdout
    # another judge's calibration is refused, naming the file and the field
    other = json.loads(cal.read_text())
    other["judge_hash"] = "ef" * 32
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(other))
    res = runner.invoke(
        assay.cli.app, ["judge", "run", str(ds), str(run), "--calibration", str(bad)]
    )
    assert res.exit_code == 2 and f"{bad}" in res.output and "judge_hash" in res.output
    assert "Traceback" not in res.output
    # pairwise reports refuse an uncalibrated judge too, and say so when allowed
    calls = len(model.requests)
    res = runner.invoke(assay.cli.app, ["judge", "run", str(ds), str(run), "--against", str(run)])
    assert res.exit_code == 2 and len(model.requests) == calls
    res = runner.invoke(
        assay.cli.app,
        ["judge", "run", str(ds), str(run), "--against", str(run), "--uncalibrated", "-f", "json"],
    )
    assert res.exit_code == 0 and json.loads(res.stdout)["calibrated"] is False
