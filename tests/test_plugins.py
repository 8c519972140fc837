"""Plug-ins: a metric, a check, an adapter or a coefficient shipped in its own distribution,
found through entry points with no edit to assay; the one registry class and its one error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import assay.metrics._registry as metric_registry
from assay._registry import Registry, RegistryError
from assay.errors import UsageError
from assay.judge.registry import _REGISTRY as CHECKS
from assay.metrics import MetricError
from assay.stats.agreement import COEFFICIENTS, STATISTICS
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
        CHECKS, COEFFICIENTS, ADAPTERS, metric_registry._REGISTRY,  # type: ignore[list-item]
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
        from assay.dataset.schema import Entry

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
