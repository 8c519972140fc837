"""Plug-ins: a metric, a check, an adapter, a system kind or a coefficient shipped in its own
distribution, found through entry points with no edit to assay (a whole eval type: a kind of
system, its adapter and its check, run, cached, resumed, checked, compared, gated and drawn by
the explorer); the one
registry class and its one error."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay.metrics._registry as metric_registry
from assay._registry import Registry, RegistryError
from assay.errors import UsageError
from assay.judge.registry import _REGISTRY as CHECKS
from assay.metrics import MetricError
from assay.stats.agreement import COEFFICIENTS, STATISTICS
from assay.systems.kinds import _KINDS as KINDS
from assay.systems.registry import _REGISTRY as ADAPTERS
from tests.conftest import write_case

SRC = Path(__file__).resolve().parents[1] / "src"

METRIC_MODULE = '''
"""A metric family shipped in its own package: hit@k under another name."""
from assay.metrics import register


@register("anyhit", binary=True, cutoff=True)
def anyhit(ctx, k):
    """1 when any required piece of the best path is in the top k (a plug-in)."""
    return (ctx.recall(k) > 0.0).astype(float)
'''

CHECK_MODULE = '''
"""A check shipped in its own package, as a `Check` value named by the entry point."""
from assay.judge import Check

CITES = Check("cites_any", lambda ctx: bool(ctx.citations), "The answer cites a chunk.", False)
'''


def make_distribution(
    where: Path, name: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]
) -> Path:
    """A distribution as an installer leaves it: modules beside `<name>-0.1.dist-info/` with
    METADATA and entry_points.txt. Put `where` on sys.path to install it."""
    where.mkdir(parents=True, exist_ok=True)
    for mod, text in modules.items():
        (where / f"{mod}.py").write_text(text, encoding="utf-8")
    info = where / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = []
    for group, eps in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return where


def _assay(args: list[str], path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(SRC)])}
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


OUTCOMES = {"lookup": [(2, 2)] * 4 + [(0, 1)] * 6 + [(1, 0)], "trend": [(1, 1)] * 3 + [(0, 2)]}


def test_a_plugin_metric_is_scored_and_compared_with_no_edit_to_assay(tmp_path: Path) -> None:
    site = make_distribution(
        tmp_path / "site",
        "assay-anyhit",
        {"assay_anyhit": METRIC_MODULE},
        {"assay.metrics": {"anyhit": "assay_anyhit"}},
    )
    ds, base, cand = write_case(tmp_path / "case", OUTCOMES)
    score = _assay(
        ["score", str(ds), str(cand), "--metrics", "anyhit@5,hit@5", "-f", "json"], site, tmp_path
    )
    assert score.returncode == 0, score.stderr
    overall = json.loads(score.stdout)["overall"]
    assert overall["anyhit@5"] == overall["hit@5"] == 14 / 15
    cmp = _assay(
        ["compare", str(ds), str(base), str(cand), "--metrics", "anyhit@5,hit@5", "--no-record",
         "--resamples", "200", "-f", "json"],
        site, tmp_path,
    )  # fmt: skip
    assert cmp.returncode == 0, cmp.stderr
    got = json.loads(cmp.stdout)
    plug, builtin = got["overall"]["metrics"]["anyhit@5"], got["overall"]["metrics"]["hit@5"]
    assert plug["kind"] == "binary" and "mcnemar_exact" in plug["tests"]
    assert plug["fixed_ids"] == builtin["fixed_ids"] and len(plug["fixed_ids"]) == 7
    assert plug["p"] == builtin["p"]
    # and it is listed where the metrics are
    listed = _assay(["compare", "--help"], site, tmp_path)
    assert "anyhit@k" in listed.stdout.replace("\n", "").replace(" ", "").replace("│", "")
    # without the distribution on the path, the name is unknown (exit 2, names what exists)
    env_less = _assay(
        ["score", str(ds), str(cand), "--metrics", "anyhit@5"], tmp_path / "none", tmp_path
    )
    assert (
        env_less.returncode == 2
        and "unknown metric 'anyhit@5'" in env_less.stderr + env_less.stdout
    )


def test_a_broken_plugin_names_its_distribution_and_entry_point(tmp_path: Path) -> None:
    site = make_distribution(
        tmp_path / "site",
        "assay-broken",
        {"assay_broken": "import not_a_module_anywhere\n"},
        {"assay.metrics": {"broken": "assay_broken"}},
    )
    ds, _, cand = write_case(tmp_path / "case", OUTCOMES)
    res = _assay(["score", str(ds), str(cand), "--metrics", "recall@5"], site, tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert "plug-in 'broken' (assay_broken, entry point group assay.metrics) of assay-broken" in out
    assert "failed to load: ModuleNotFoundError" in out and "Traceback" not in out


def test_a_broken_adapter_plugin_does_not_stop_other_commands(tmp_path: Path) -> None:
    """The command line lists adapters in `assay run --help` when it starts: a broken adapter
    plug-in must not stop `assay score`; the first adapter lookup raises its error."""
    site = make_distribution(
        tmp_path / "site",
        "assay-badsys",
        {"assay_badsys": "raise RuntimeError('no backend configured')\n"},
        {"assay.systems": {"badsys": "assay_badsys"}},
    )
    ds, _, cand = write_case(tmp_path / "case", OUTCOMES)
    ok = _assay(["score", str(ds), str(cand), "-f", "json"], site, tmp_path)
    assert ok.returncode == 0, ok.stderr
    run = _assay(
        ["run", str(ds), "--system", "bm25", "--chunks", str(ds), "--out", str(tmp_path / "r.jsonl")],
        site, tmp_path,
    )  # fmt: skip
    out = run.stdout + run.stderr
    assert run.returncode == 2, out
    assert "plug-in 'badsys' (assay_badsys, entry point group assay.systems) of assay-badsys" in out
    assert "RuntimeError: no backend configured" in out and "Traceback" not in out


@pytest.fixture()
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A site folder on sys.path for in-process plug-ins; every registry forgets them after."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    registries: list[Registry[object]] = [
        CHECKS, COEFFICIENTS, ADAPTERS, KINDS, metric_registry._REGISTRY,  # type: ignore[list-item]
    ]  # fmt: skip
    for r in registries:
        r.reset_plugins()
    yield site
    for r in registries:
        r.reset_plugins()


def test_an_entry_point_may_name_an_item_which_is_registered_under_its_name(
    on_path: Path, tmp_path: Path
) -> None:
    from assay.stats.agreement import Coefficient

    make_distribution(
        on_path,
        "assay-extras",
        {
            "assay_extras_checks": CHECK_MODULE,
            "assay_extras_coeff": (
                "from assay.stats.agreement import Coefficient\n"
                "RAW = Coefficient('raw_again', 'raw agreement again', lambda s: s.pa, 'never')\n"
            ),
        },
        {
            "assay.checks": {"cites_any": "assay_extras_checks:CITES"},
            "assay.coefficients": {"raw_again": "assay_extras_coeff:RAW"},
        },
    )
    try:
        from assay.judge import check_entry, get_check

        assert get_check("cites_any").description == "The answer cites a chunk."
        from assay.dataset import Entry

        e = Entry.model_validate({"id": "e", "query": "q", "category": "c"})
        assert check_entry(e, "x", citations=["c1"], checks="cites_any").values == {
            "cites_any": True
        }
        assert isinstance(COEFFICIENTS["raw_again"], Coefficient)
        assert STATISTICS["raw_again"] == "raw agreement again"
        from assay.stats.agreement import agreement

        res = agreement(
            [{"item": "i", "rater": "a", "label": 1}, {"item": "i", "rater": "b", "label": 1}]
        )
        assert res.statistics["raw_again"].value == res.statistics["raw_agreement"].value == 1.0
    finally:
        CHECKS.remove("cites_any")
        COEFFICIENTS.remove("raw_again")
        STATISTICS.pop("raw_again", None)


def test_one_error_for_unknown_and_duplicate_names_listing_what_is_registered() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("a", 1)
    reg.add("b", 2)
    with pytest.raises(RegistryError, match=r"unknown widget 'c'; registered widgets: a, b"):
        reg.lookup("c")
    with pytest.raises(
        RegistryError, match=r"widget 'a' is already registered; registered widgets: a, b"
    ):
        reg.add("a", 3)
    reg.add("a", 3, replace=True)
    assert reg.lookup("a") == 3 and list(reg) == ["a", "b"] and "c" not in reg
    assert issubclass(RegistryError, UsageError) and issubclass(MetricError, RegistryError)
    # the four registries raise it alike
    from assay.judge import get_check
    from assay.metrics import parse
    from assay.systems import register_adapter
    from assay.systems.registry import find_adapter

    with pytest.raises(RegistryError, match="unknown answer check 'nope'; registered checks: "):
        get_check("nope")
    with pytest.raises(RegistryError, match="unknown metric 'nope'"):
        parse("nope")
    with pytest.raises(RegistryError, match="system adapter 'bm25' is already registered"):
        register_adapter(ADAPTERS["bm25"])
    with pytest.raises(RegistryError, match="expected one of"):
        find_adapter("nope")
    with pytest.raises(RegistryError, match="agreement coefficient 'fleiss_kappa' is already"):
        COEFFICIENTS.add("fleiss_kappa", COEFFICIENTS["fleiss_kappa"])


TOY_MODULE = '''
"""A toy eval type in its own distribution: a kind of system that shouts the question back, its
adapter (``shout``, and ``shout-sloppy`` which sometimes does not) and the check that it did."""
import os

from assay.judge import Check
from assay.systems import Adapter
from assay.systems.kinds import SystemKind

CALLS = []


class Shouter:
    def __init__(self, sloppy):
        self.sloppy = sloppy

    def identity(self):
        return {"sloppy": self.sloppy}

    def shout(self, question):
        stop = os.environ.get("TOY_STOP_AFTER")
        if stop is not None and len(CALLS) >= int(stop):
            raise KeyboardInterrupt  # as Ctrl-C would
        CALLS.append(question)
        wrong = self.sloppy and question[-1] in "13579"
        return question if wrong else question.upper()


def _call(system, entry, ctx):
    return {"id": entry.id, "answer": system.shout(entry.query)}


KIND = SystemKind(
    name="shout",
    contract="shout(question)",
    accepts=lambda obj: callable(getattr(obj, "shout", None)),
    call=_call,
    uses_k=False,
    help="the question said back, loudly",
)
ADAPTER = Adapter(
    name="shout",
    usage="shout | shout-sloppy",
    help="a system that shouts the question back (shout-sloppy: not always)",
    build=lambda spec, options: Shouter(spec == "shout-sloppy"),
    matches=lambda spec: spec in ("shout", "shout-sloppy"),
)
CHECK = Check(
    "shouted",
    lambda ctx: None if ctx.answer is None else ctx.answer == ctx.entry.query.upper(),
    "The answer is the question, shouted.",
    default=False,
)
'''

TOY_ENTRY_POINTS = {
    "assay.kinds": {"shout": "toy_shout:KIND"},
    "assay.systems": {"shout": "toy_shout:ADAPTER"},
    "assay.checks": {"shouted": "toy_shout:CHECK"},
}


def test_a_plugin_eval_type_is_run_cached_resumed_checked_compared_gated_and_drawn(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (registers every command)
    from assay.cli import app
    from assay.explorer import entry_filenames

    make_distribution(on_path, "assay-toy-shout", {"toy_shout": TOY_MODULE}, TOY_ENTRY_POINTS)
    for registry in (KINDS, ADAPTERS, CHECKS):  # installed while this process runs
        registry.reset_plugins()
    ds, _, _ = write_case(tmp_path / "case", {"lookup": [(1, 1)] * 20, "trend": [(1, 1)] * 10})
    runner = CliRunner()
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def run(system: str, out: Path) -> Any:
        return runner.invoke(app, ["run", str(ds), "--system", system, "--out", str(out), *cache])

    try:
        base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
        monkeypatch.setenv("TOY_STOP_AFTER", "4")  # killed after four rows
        killed = run("shout", base)
        assert killed.exit_code == 130, killed.output
        assert "interrupted after 4 of 30 rows" in killed.output
        calls = sys.modules["toy_shout"].CALLS
        assert len(calls) == 4 and len(Path(f"{base}.partial").read_text().splitlines()) == 4
        monkeypatch.delenv("TOY_STOP_AFTER")
        resumed = run("shout", base)
        assert resumed.exit_code == 0, resumed.output
        assert "4 resumed, 0 from cache, 26 called" in resumed.output and len(calls) == 30
        assert len(set(calls)) == 30  # no entry asked twice
        again = run("shout", tmp_path / "again.jsonl")
        assert again.exit_code == 0 and "30 from cache, 0 called" in again.output
        assert len(calls) == 30
        assert run("shout-sloppy", cand).exit_code == 0 and len(calls) == 60
        rows = [json.loads(line) for line in cand.read_text().splitlines()]
        assert rows and all("retrieved" not in r and r["entry_fp"] for r in rows)
        assert json.loads(Path(f"{cand}.meta.json").read_text())["kind"] == "shout"
        wrong = sum(r["answer"] != r["answer"].upper() for r in rows)
        assert wrong == 15

        check = runner.invoke(
            app, ["check", str(ds), str(cand), "--checks", "shouted", "--resamples", "100",
                  "-f", "json"],
        )  # fmt: skip
        assert check.exit_code == 0, check.output
        assert json.loads(check.stdout)["rates"]["overall"]["shouted"]["rate"] == 0.5
        cmp = runner.invoke(
            app, ["compare", str(ds), str(base), str(cand), "--metrics", "shouted", "--no-record",
                  "--resamples", "200", "-f", "json"],
        )  # fmt: skip
        assert cmp.exit_code == 0, cmp.output
        shouted = json.loads(cmp.stdout)["overall"]["metrics"]["shouted"]
        assert (shouted["fixed"], shouted["broken"]) == (0, 15)
        gate = runner.invoke(
            app, ["gate", str(ds), str(base), str(cand), "--metrics", "shouted", "--no-record"]
        )
        assert gate.exit_code == 1, gate.output
        same = runner.invoke(
            app, ["gate", str(ds), str(base), str(tmp_path / "again.jsonl"), "--metrics",
                  "shouted", "--no-record"],
        )  # fmt: skip
        assert same.exit_code == 0, same.output
        # the explorer draws it with no chunk table: its check scored, compared and plotted,
        # each entry page with both answers and their verdicts
        bundle, site = tmp_path / "bundle.json", tmp_path / "explorer"
        export = runner.invoke(
            app, ["export", str(ds), str(base), str(cand), "--metrics", "shouted", "--resamples",
                  "100", "--out", str(bundle)],
        )  # fmt: skip
        assert export.exit_code == 0, export.output
        data = json.loads(bundle.read_text())
        assert (data["kind"], data["headline"]) == ("answers", "shouted")
        assert data["comparisons"]["cand"]["overall"]["metrics"]["shouted"]["broken"] == 15
        shown = runner.invoke(app, ["report", str(bundle), "--out", str(site)])
        assert shown.exit_code == 0, shown.output
        overview = (site / "index.html").read_text()
        assert '<section class="metric" id="m-shouted">' in overview and "<svg" in overview
        page = html.unescape((site / entry_filenames(["lookup-001"])["lookup-001"]).read_text())
        assert "QUESTION LOOKUP-001" in page and "question lookup-001" in page
        assert '<span class="status pass">' in page and '<span class="status fail">' in page
        assert "pieces not in the top" not in page
    finally:
        for registry, name in ((KINDS, "shout"), (ADAPTERS, "shout"), (CHECKS, "shouted")):
            registry.remove(name)
        sys.modules.pop("toy_shout", None)
    # the command line lists the kind and its adapter in `assay run --help`
    listed = _assay(["run", "--help"], on_path, tmp_path)
    flat = " ".join(listed.stdout.replace("│", " ").split())
    assert listed.returncode == 0, listed.stderr
    assert "shout | shout-sloppy: a system that shouts" in flat
    assert "shout: shout(question); the question said back, loudly" in flat


def test_a_plugin_check_is_listed_in_the_help_of_check_compare_and_gate(on_path: Path) -> None:
    """The help lists the registries when it is shown: a plug-in check and metric appear beside
    the built-in ones (with a check's kind and direction from its registration)."""
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401  (registers every command)
    from assay.cli import app

    counted = CHECK_MODULE.replace(
        '"The answer cites a chunk.", False)',
        '"The answer cites a chunk.", False, kind="count", higher_is_better=False)',
    )
    make_distribution(
        on_path,
        "assay-help-extras",
        {"assay_help_checks": counted, "assay_help_metric": METRIC_MODULE},
        {
            "assay.checks": {"cites_any": "assay_help_checks:CITES"},
            "assay.metrics": {"anyhit": "assay_help_metric"},
        },
    )
    try:
        for command in ("check", "compare", "gate"):
            res = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "400"})
            assert res.exit_code == 0, res.output
            text = " ".join(res.output.split())
            assert "cites_any (count, lower is better, not default)" in text, command
            assert "anyhit@k" in text and "exec_match" in text and "answer_correct" in text
    finally:
        CHECKS.remove("cites_any")
        metric_registry.unregister("anyhit")
