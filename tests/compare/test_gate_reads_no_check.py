"""A gate on metrics alone reads no answer check: the check registry (assay.judge and every
module of assay.checks) is imported only when a check could bear a gated name, and a name that
is both a metric and a check is refused as before: a check registered in this process, a
plug-in check named like a metric, a plug-in metric named like one of assay's checks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import cli_in_child, write_case
from tests.test_plugins import make_distribution

from assay.compare.series import SeriesError, describe
from assay.judge.registry import builtin_checks, check, unregister
from assay.metrics import families

SRC = Path(__file__).resolve().parents[2] / "src"
OUTCOMES = {"a": [(1, 2), (2, 2), (0, 2)] * 4, "b": [(2, 0)] * 9}

_CHECK_CODE = ("assay.judge", "assay.checks", "assay.sql")


def _gate(tmp_path: Path, *extra: str, site: Path | None = None) -> tuple[str, list[str]]:
    """The gate's output and ["exit", its code, the check code it imported ("-": none)]."""
    ds, base, cand = write_case(tmp_path / "case", OUTCOMES)
    args = ["gate", str(ds), str(base), str(cand), "--no-record", "-f", "json", *extra]
    out, code, modules = cli_in_child(args, site=site)
    read = sorted(m for m in modules if m.startswith(_CHECK_CODE))
    return out, ["exit", code, ",".join(read) or "-"]


@pytest.mark.parametrize("named", [[], ["--metrics", "complete@5,recall@5,mrr"]])
def test_a_gate_on_metrics_alone_imports_no_check(tmp_path: Path, named: list[str]) -> None:
    out, (_, code, read) = _gate(tmp_path, *named)
    assert code in ("0", "1"), out
    assert '"rows"' in out
    assert read == "-", f"a gate on metrics alone imported {read}"


def test_a_gate_on_a_check_still_reads_the_checks(tmp_path: Path) -> None:
    out, (_, code, read) = _gate(tmp_path, "--metrics", "complete@5,refusal_ok")
    assert code in ("0", "1", "2"), out
    assert "assay.judge.registry" in read.split(",")


def test_no_check_of_assay_bears_the_name_of_a_metric_of_assay() -> None:
    # what lets a gate on assay's own metrics skip the check registry (series._names_a_check)
    own = {f.name for f in families() if f.compute.__module__.startswith("assay.")}
    assert own >= {"complete", "recall", "mrr"}
    clash = [c for c in builtin_checks() if c.split("@", 1)[0].strip().lower() in own]
    assert clash == []


@pytest.fixture()
def complete_check() -> Iterator[None]:
    check("complete@5", description="A check named like a metric.")(lambda ctx: True)
    yield
    unregister("complete@5")


def test_a_check_registered_here_named_like_a_metric_is_refused(complete_check: None) -> None:
    with pytest.raises(SeriesError, match="both a registered metric and a registered check"):
        describe("complete@5")
    assert describe("recall@5").source == "metric"


PLUGIN_CHECK = '''
from assay.judge import check


@check("recall@5", default=False)
def recall_at_5(ctx):
    """A plug-in check named like a metric."""
    return True
'''

PLUGIN_METRIC = '''
from assay.metrics import register


@register("answer_correct", binary=True, cutoff=False)
def answer_correct(ctx, k):
    """A plug-in metric named like one of assay's checks."""
    return ctx.recall(5)
'''


@pytest.mark.parametrize(
    ("group", "module", "gated"),
    [
        ("assay.checks", PLUGIN_CHECK, []),  # recall@5 is compared beside complete@5 by default
        ("assay.metrics", PLUGIN_METRIC, ["--metric", "answer_correct"]),
        ("assay.checks", "import not_a_module_anywhere\n", []),  # a broken one stays an error
    ],
    ids=["check-like-a-metric", "metric-like-a-check", "broken-check"],
)
def test_a_plugin_that_clashes_is_refused_by_a_gate_on_metrics(
    tmp_path: Path, group: str, module: str, gated: list[str]
) -> None:
    site = make_distribution(
        tmp_path / "site", "assay-clash", {"assay_clash": module}, {group: {"clash": "assay_clash"}}
    )
    out, (_, code, _) = _gate(tmp_path, *gated, site=site)
    assert code == "2", out
    if "not_a_module" in module:
        assert "plug-in 'clash' (assay_clash, entry point group assay.checks)" in out
    else:
        name = "answer_correct" if group == "assay.metrics" else "recall@5"
        assert f"{name!r} is both a registered metric and a registered check; rename one" in out
