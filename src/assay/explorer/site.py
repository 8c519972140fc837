"""The offline explorer: static HTML pages rendered from a results bundle alone.

Pages: ``index.html`` (per-category scores with intervals and one SVG plot per metric; what is
not significant says so), ``compare-<run>.html`` per candidate (flips per category with the
fixed and broken ids, p and Holm), ``leaderboard.html`` with several candidates, ``ladder.html``
with an ablation ladder, ``attribution.html`` (the failure funnel per category), ``entries.html``
(every entry, filtered by category and status with a little vanilla JavaScript; a
conversation's turns grouped under it) and one page per entry under ``entries/``; with
conversations, ``conversations.html`` (each with its status per run and the roll-up per
conversation) and one page per conversation under ``conversations/`` (the turns in order, the
runs side by side, the failing checks marked).

The site opens from ``file://``: no server, no network request (plots are SVG drawn at build
time by matplotlib and inlined; style and script are local files). The same bundle gives the
same bytes: no clock time, sorted everything, SVG ids salted with a constant.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import UsageError
from assay.explorer._rows import canonical_json
from assay.explorer.bundle import Bundle, bundle_entries, export_bundle, load_bundle
from assay.metrics import DEFAULT_PAIR, HEADLINE, families
from assay.report import ReportMixin, Tabular
from assay.report.interval import fmt_end

__all__ = [
    "MARKER",
    "STAGES",
    "SiteResult",
    "conversation_filenames",
    "entry_filenames",
    "render_site",
]

MARKER = ".assay-site"
"""A file in every site folder; a folder without it is never replaced."""

STAGES = ("parse", "chunk", "recall", "rerank", "generation", "grounding")
"""The stages of failure attribution, in pipeline order (others follow in name order)."""

_HERE = Path(__file__).resolve().parent


@dataclass
class SiteResult(ReportMixin):
    """The pages written (relative paths) and the bundle they came from."""

    out_dir: str
    pages: list[str]
    bundle_sha256: str
    notes: list[str] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return Path(self.out_dir) / "index.html"

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "index": str(self.index),
            "pages": len(self.pages),
            "bundle_sha256": self.bundle_sha256,
            "notes": self.notes,
        }

    def tabular(self) -> Tabular:
        kinds: dict[str, int] = {}
        for p in self.pages:
            kind = "entry pages" if p.startswith("entries/") else p
            kind = "conversation pages" if p.startswith("conversations/") else kind
            kinds[kind] = kinds.get(kind, 0) + 1
        return Tabular(
            "Explorer site",
            ["page", "count"],
            [[k, str(v)] for k, v in kinds.items()],
            [f"open {self.index} (no server needed)", f"bundle {self.bundle_sha256[:16]}"],
            emphasis=set(),
        )


# ------------------------------------------------------------------ formatting helpers


def _num(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _ci(iv: Mapping[str, Any] | None, digits: int = 2, signed: bool = False) -> str:
    if not iv or iv.get("low") is None or iv.get("high") is None:
        return ""
    if signed:  # a delta's: an end past 0 that rounds to it is >0 or <0
        return f"[{fmt_end(iv['low'], digits)}, {fmt_end(iv['high'], digits)}]"
    return f"[{iv['low']:.{digits}f}, {iv['high']:.{digits}f}]"


def _p(p: Any) -> str:
    if p is None:
        return "-"
    p = float(p)
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def _delta(iv: Mapping[str, Any] | None) -> str:
    if not iv or iv.get("value") is None:
        return "-"
    return f"{iv['value']:+.3f} {_ci(iv, 3, signed=True)}".strip()


def _check(v: Any) -> str:
    if v is True:
        return "pass"
    if v is False:
        return "fail"
    if v is None:
        return "abstain"
    return _num(v)


_FACTS = {"refused": ("refused", "answered")}
"""Values an entry's check row carries beside the checks (what happened, neither good nor bad):
name -> (words for True, words for False)."""


def _check_of(name: str) -> Any:
    from assay.judge import get_check
    from assay.judge.registry import RegistryError

    try:
        return get_check(name)
    except RegistryError:  # a plug-in check not installed where the site is rendered
        return None


def check_is_error(name: str) -> bool:
    """Whether the check `name` flags an error (a binary check whose True is bad: registered
    with ``higher_is_better=False``, as ``abstained_when_should_answer`` is). A check the
    registry does not know is read as a pass/fail check."""
    c = _check_of(name)
    return c is not None and c.kind == "binary" and not c.higher_is_better


def _error_words(name: str) -> str:
    """What happened when the error check `name` is True: its description without the leading
    ``Error:`` and the parenthesis (``declined an entry that should be answered``)."""
    c = _check_of(name)
    text = (c.description if c is not None else "").removeprefix("Error:").strip()
    text = re.split(r"\s*[(.]", text, maxsplit=1)[0].strip()
    return text or name.replace("_", " ")


def check_cell(name: str, v: Any) -> tuple[str, str]:
    """(css class, words) of the value `v` of the check `name` on one entry: ``good`` /
    ``bad`` / ``abstain`` / ``fact`` (neither), and words saying what happened: a pass-type
    check's ``pass`` / ``fail``; an error check's ``ok`` when no error happened, what went
    wrong when one did."""
    if name in _FACTS and isinstance(v, bool):
        return "fact", _FACTS[name][0 if v else 1]
    if v is None:
        return "abstain", "abstain"
    if isinstance(v, bool):
        if check_is_error(name):
            return ("bad", _error_words(name)) if v else ("good", "ok")
        return ("good", "pass") if v else ("bad", "fail")
    return "fact", _num(v)


def _wrap_name(name: str) -> Any:
    """A check name that may wrap after its underscores (a narrow table column)."""
    from markupsafe import Markup, escape

    return Markup("_<wbr>").join(escape(part) for part in name.split("_"))


def entry_filenames(ids: list[str]) -> dict[str, str]:
    """A distinct, safe file name for every entry id (``entries/<name>.html``)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for eid in ids:
        slug = re.sub(r"[^A-Za-z0-9._-]", "_", eid)[:80].strip(".") or "entry"
        if slug != eid or slug.lower() in taken:
            slug = f"{slug}-{hashlib.sha256(eid.encode()).hexdigest()[:8]}"
        taken.add(slug.lower())
        out[eid] = f"entries/{slug}.html"
    return out


def conversation_filenames(ids: list[str]) -> dict[str, str]:
    """A distinct, safe file name for every conversation id (``conversations/<name>.html``)."""
    return {
        cid: "conversations/" + f.removeprefix("entries/")
        for cid, f in entry_filenames(ids).items()
    }


def _entry_groups(data: Mapping[str, Any]) -> list[tuple[Any, list[Any]]]:
    """The entries list's rows: (None, [entry]) for an entry of no conversation, and
    (conversation row, its turn entries in order) where its first turn comes."""
    convs = {c["id"]: c for c in data.get("conversations") or []}
    if not convs:
        return [(None, [e]) for e in data["entries"]]
    by_id = {e["id"]: e for e in data["entries"]}
    out: list[tuple[Any, list[Any]]] = []
    seen: set[str] = set()
    for e in data["entries"]:
        ref = e.get("conversation")
        if ref is None or ref["id"] not in convs:
            out.append((None, [e]))
        elif ref["id"] not in seen:
            seen.add(ref["id"])
            c = convs[ref["id"]]
            out.append((c, [by_id[t] for t in c["turns"] if t in by_id]))
    return out


def _failing_turns(
    by_id: Mapping[str, Any], conv: Mapping[str, Any], run: str
) -> dict[str, list[int]]:
    """check (or pass/fail metric) -> the turns (numbers) of `conv` whose value of it `run`
    fails, as the turn's cells mark it (`check_cell`: ``bad``; complete@k below 1), by name."""
    rolled = (conv["runs"].get(run) or {}).get("metrics") or {}
    passfail = {m for m, v in rolled.items() if v.get("every_turn") is not None}
    out: dict[str, list[int]] = {}
    for tid in conv["turns"]:
        e = by_id.get(tid)
        if e is None:
            continue
        x = e["runs"].get(run) or {}
        for name, v in sorted((x.get("checks") or {}).items()):
            if name != "notes" and check_cell(name, v)[0] == "bad":
                out.setdefault(name, []).append(e["conversation"]["turn"])
        for name in sorted(passfail):  # a pass/fail metric (complete@k) below 1 on the turn
            got = (x.get("metrics") or {}).get(name)
            if got is not None and got < 1.0:
                out.setdefault(name, []).append(e["conversation"]["turn"])
    return dict(sorted(out.items()))


def _conversation_checks(data: Mapping[str, Any]) -> list[str]:
    """The checks the entries list filters conversations by: every check with a verdict on
    some conversation, the conversation checks first (registry order), then by name."""
    from assay.judge.registry import check_names

    got = {
        c for conv in data.get("conversations") or [] for r in conv["runs"].values()
        for c in r.get("verdicts", {})
    }  # fmt: skip
    first = [c for c in check_names(group="conversation") if c in got]
    return first + sorted(got - set(first))


def _conversation_order(names: Sequence[str]) -> list[str]:
    """Metrics first (`_series_order`), then the conversation checks, then the other checks."""
    from assay.judge.registry import check_names

    conv = [c for c in check_names(group="conversation") if c in names]
    ordered = _series_order([n for n in names if n not in conv])
    metrics = [n for n in ordered if _check_of(n) is None]
    return metrics + conv + [n for n in ordered if n not in metrics]


def _rollup_names(conv: Mapping[str, Any]) -> list[str]:
    """The scores a conversation's roll-up table shows: every one some run rolled up."""
    names = {n for r in conv["runs"].values() for part in ("metrics", "checks") for n in r[part]}
    return _conversation_order(list(names))


def _turn_checks(checks: Mapping[str, Any]) -> list[str]:
    """A turn's checks as its conversation page lists them: the conversation checks, then
    every other check that rated it (an abstaining answer check left to the entry page)."""
    from assay.judge.registry import check_names

    conv = set(check_names(group="conversation"))
    names = [k for k, v in checks.items() if k != "notes" and (k in conv or v is not None)]
    return _conversation_order([n for n in names if _check_of(n) is not None]) + sorted(
        n for n in names if _check_of(n) is None and not isinstance(checks[n], str)
    )


def _stage_order(stages: Any) -> list[str]:
    names = set(stages)
    return [s for s in STAGES if s in names] + sorted(names - set(STAGES))


# ------------------------------------------------------------------ plots


def _series_order(names: Sequence[str], first: Sequence[str] = ()) -> list[str]:
    """``names`` (metric names such as ``recall@5``, check names) in the order the registries
    give: the series named in ``first`` (what the comparisons compare), then the metric
    families (the headline, then the default score table's columns, then by name), then the
    registered checks in registry order (plug-ins after assay's own); a name neither registry
    knows (a plug-in not installed where the site is rendered) last, by name."""
    from assay.judge.registry import check_names

    fams = sorted(
        families(),
        key=lambda f: (f.name != HEADLINE, f.default is None, f.default or 0, f.name),
    )
    rank = {f.name: i for i, f in enumerate(fams)}
    checks = {n: i for i, n in enumerate(check_names())}
    lead = {n.split("@")[0]: i for i, n in enumerate(first)}

    def key(name: str) -> tuple[int, int, str]:
        fam = name.split("@")[0]
        if fam in lead:
            return (0, lead[fam], name)
        if fam in rank:
            return (1, rank[fam], name)
        if name in checks:
            return (2, checks[name], name)
        return (3, 0, name)

    return sorted(names, key=key)


def _compared(data: Mapping[str, Any]) -> list[str]:
    """The series the bundle's comparisons compare (the default pair when there are none)."""
    for cmp in data.get("comparisons", {}).values():
        return list(cmp.get("metrics", DEFAULT_PAIR))
    return list(DEFAULT_PAIR)


def _metric_names(data: Mapping[str, Any]) -> list[str]:
    base = data["scores"][data["baseline"]]["overall"]
    names = [m for m in base if not m.endswith("_ci") and m not in ("n", "unanswerable_n")]
    return _series_order(names, _compared(data))


Cell = tuple[float, float | None, float | None]  # a value and its interval (low, high)


def _score_cells(data: Mapping[str, Any], metric: str) -> dict[str, dict[str, Cell]]:
    """{run: {category (and "overall"): (value, low, high)}} of a scored series."""
    out: dict[str, dict[str, Cell]] = {}
    for r in data["runs"]:
        sc = data["scores"][r["name"]]
        cells = {**sc["categories"], "overall": sc["overall"]}
        out[r["name"]] = {}
        for cat, cell in cells.items():
            if cell.get(metric) is not None:
                iv = cell.get(f"{metric}_ci") or {}
                out[r["name"]][cat] = (cell[metric], iv.get("low"), iv.get("high"))
    return out


def _check_plots(data: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Cell]]]:
    """{check: {run: {category: (rate, low, high)}}} of every answer check some run's report
    rated, in registry order: what the overview draws beside the check tables."""
    out: dict[str, dict[str, dict[str, Cell]]] = {}
    for run, rep in sorted(data.get("checks", {}).items()):
        for cat, cells in rep.get("rates", {}).items():
            for c, cell in cells.items():
                if cell.get("rate") is not None:
                    iv = cell.get("interval") or {}
                    cat_cells = out.setdefault(c, {}).setdefault(run, {})
                    cat_cells[cat] = (cell["rate"], iv.get("low"), iv.get("high"))
    return {c: out[c] for c in _series_order(list(out))}


def _series_words(name: str) -> str:
    """The axis label of a plotted series: its name, its interval and, from its registration,
    which way is better when lower is (a count, an error rate)."""
    c = _check_of(name)
    lower = c is not None and not c.higher_is_better
    return f"{name} (95% interval{'; lower is better' if lower else ''})"


def _plot_svg(data: Mapping[str, Any], metric: str, cells: dict[str, dict[str, Cell]]) -> str:
    """Each run's value of ``metric`` per category with its interval bar, as inline SVG.

    ``cells`` maps run -> category -> (value, low, high). A share (every value and bound in
    [0, 1]) is drawn on [0, 1]; a count (a registered count check, or values above 1) from 0 to
    its largest value."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    runs = [r["name"] for r in data["runs"] if r["name"] in cells]
    named = {c for per in cells.values() for c in per} - {"overall"}
    cats = [*sorted(named), "overall"]
    height = 0.9 + 0.32 * len(cats) * max(1, len(runs)) ** 0.5
    top = max(
        [1.0]
        + [x for per in cells.values() for cell in per.values() for x in cell if x is not None]
    )
    with matplotlib.rc_context(
        {"svg.hashsalt": "assay-explorer", "svg.fonttype": "none", "font.size": 9}
    ):
        fig = Figure(figsize=(6.4, height))
        FigureCanvasSVG(fig)
        ax = fig.add_subplot(1, 1, 1)
        step = 0.8 / max(1, len(runs))
        for j, name in enumerate(runs):
            for n, (i, c) in enumerate((i, c) for i, c in enumerate(cats) if c in cells[name]):
                v, lo, hi = cells[name][c]
                y = i + (j - (len(runs) - 1) / 2) * step
                if lo is not None and hi is not None:
                    ax.plot([lo, hi], [y, y], color=f"C{j}", linewidth=1.6)
                ax.plot([v], [y], "o", color=f"C{j}", markersize=4, label=name if n == 0 else None)
        ax.set_yticks(range(len(cats)), cats)
        ax.invert_yaxis()
        ax.set_xlim(-0.02 * top, 1.02 * top)
        ax.set_xlabel(_series_words(metric))
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        if ax.get_legend_handles_labels()[1]:  # a series no run has a value of: no legend
            ax.legend(loc="lower right", fontsize=8, frameon=False)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "assay"})
    svg = buf.getvalue()
    return svg[svg.index("<svg") :]


# ------------------------------------------------------------------ pages


def _env() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=_num, ci=_ci, p=_p, delta=_delta, check=_check, wrap_name=_wrap_name)
    return env


def _significance(mc: Mapping[str, Any], alpha: float) -> str:
    p = mc.get("p_holm")
    if p is None:
        return "no test"
    return "significant" if p < alpha else "not significant"


def _cluster_words(data: Mapping[str, Any]) -> str | None:
    """``Clustered by document: 73 entries in 46 clusters: ...`` when the bundle's intervals
    and tests treat a cluster as one draw (its ``clustering``); None otherwise."""
    from assay.stats.clusters import ClusterSummary

    c = data.get("clustering")
    if not c:
        return None
    w = ClusterSummary(**c).words()
    return (
        f"{w[0].upper()}{w[1:]}: every interval, rate and p-value treats a cluster as one draw "
        "(the comparisons' p and CI from one cluster-level test)."
    )


def _score_ci_words(data: Mapping[str, Any]) -> str | None:
    """How the bundle's score intervals were drawn, in the words `assay score` prints
    (`assay.score.retrieval.ci_words`, from the baseline's ``ci`` record); None without one."""
    from assay.score import ci_words

    scores = data.get("scores", {}).get(data.get("baseline")) or {}
    ci = scores.get("ci")
    if not ci:
        return None
    return ci_words(
        ci.get("method"), ci.get("seed"), ci.get("rate_method"),
        clustered=bool(scores.get("clustering")),
    )  # fmt: skip


def _pages(data: Mapping[str, Any]) -> dict[str, str]:
    """Every page of the site: relative path -> text."""
    from markupsafe import Markup

    from assay.compare.render import P_TESTS, cluster_line, counts_line, delta_ci_words, zero_key
    from assay.judge.report import CI_METHOD as CHECK_CI_METHOD
    from assay.stats.clusters import ClusterSummary

    env = _env()
    runs = [r["name"] for r in data["runs"]]
    base = data["baseline"]
    cands = [n for n in runs if n != base]
    files = entry_filenames([e["id"] for e in data["entries"]])
    metrics = _metric_names(data)
    cats = [*sorted(data["scores"][base]["categories"]), "overall"]
    alpha = 0.05
    if data["comparisons"]:
        alpha = float(next(iter(data["comparisons"].values())).get("alpha", 0.05))
    nav = [("index.html", "Overview"), ("entries.html", "Entries")]
    nav += [(f"compare-{_slug(n)}.html", f"{n} vs {base}") for n in cands]
    if data.get("leaderboard"):
        nav.append(("leaderboard.html", "Leaderboard"))
    if data.get("ladder"):
        nav.append(("ladder.html", "Ablation ladder"))
    if data["attribution"]:  # none for SQL questions: no pipeline stage to lose them in
        nav.append(("attribution.html", "Attribution"))
    convs = data.get("conversations") or []
    conv_files = conversation_filenames([c["id"] for c in convs])
    by_id = {e["id"]: e for e in data["entries"]} if convs else {}
    failing: dict[tuple[str, str], dict[str, list[int]]] = {}

    def failing_turns(conv: Mapping[str, Any], run: str) -> dict[str, list[int]]:
        key = (conv["id"], run)  # each conversation's once, for every page that shows it
        if key not in failing:
            failing[key] = _failing_turns(by_id, conv, run)
        return failing[key]

    if convs:
        nav.insert(2, ("conversations.html", "Conversations"))
    common = {
        "data": data,
        "runs": runs,
        "base": base,
        "cands": cands,
        "nav": nav,
        "files": files,
        "alpha": alpha,
        "bundle_sha256": hashlib.sha256(canonical_json(data, indent=None).encode()).hexdigest(),
        "slug": _slug,
        "significance": _significance,
        "stage_order": _stage_order,
        "check_cell": check_cell,
        "check_is_error": check_is_error,
        "delta_ci_words": delta_ci_words,
        # a comparison's tests, in the words of `assay compare`'s report
        "cluster_line": lambda cmp: cluster_line(ClusterSummary(**cmp["clustering"])),
        "p_tests": P_TESTS,
        "counts_line": counts_line,
        "score_ci": _score_ci_words(data),
        "check_ci": CHECK_CI_METHOD,  # what `assay check` says of its rates' intervals
        "clustered": _cluster_words(data),
        "conv_files": conv_files,
        "failing_turns": failing_turns,
        "rollup_names": _rollup_names,
        "turn_checks": _turn_checks,
    }

    def page(template: str, path: str, **extra: Any) -> str:
        root = "../" * path.count("/")
        return str(env.get_template(template).render(**common, root=root, here=path, **extra))

    out: dict[str, str] = {}
    plots = {m: Markup(_plot_svg(data, m, _score_cells(data, m))) for m in metrics}
    check_plots = {}
    if data.get("kind") is None:  # with nothing retrieved, the checks are the scored series
        check_plots = {c: Markup(_plot_svg(data, c, v)) for c, v in _check_plots(data).items()}
    cmps = data["comparisons"]
    out["index.html"] = page(
        "overview.html",
        "index.html",
        metrics=metrics,
        cats=cats,
        plots=plots,
        check_plots=check_plots,
        key=zero_key(d for n in cands for d in _deltas(cmps[n], metrics, cats)),
    )
    out["entries.html"] = page(
        "entries.html",
        "entries.html",
        categories=sorted({e["category"] for e in data["entries"]}),
        groups=_entry_groups(data),
        conv_checks=_conversation_checks(data),
    )
    if convs:  # the turns of each conversation in one view (`assay.explorer.convview`)
        overall = {
            r: {
                **((data["scores"].get(r) or {}).get("conversations") or {}).get("scores", {}),
                **((data.get("checks", {}).get(r) or {}).get("conversations") or {}).get(
                    "scores", {}
                ),
            }
            for r in runs
        }
        out["conversations.html"] = page(
            "conversations.html",
            "conversations.html",
            overall_names=_conversation_order(
                list({n for v in overall.values() for n, x in v.items() if x.get("n")})
            ),
            overall_rollup=lambda r, n: overall[r].get(n),
        )
        for c in convs:
            path = conv_files[c["id"]]
            out[path] = page("conversation.html", path, c=c, by_id=by_id)
    for n in cands:
        path = f"compare-{_slug(n)}.html"
        out[path] = page(
            "comparison.html", path, cand=n, cmp=cmps[n], key=zero_key(_deltas(cmps[n]))
        )
    if data.get("leaderboard"):
        lb = data["leaderboard"]
        shown = (row["overall"][m]["delta"] for row in lb["leaderboard"] for m in lb["metrics"])
        out["leaderboard.html"] = page("leaderboard.html", "leaderboard.html", key=zero_key(shown))
    if data.get("ladder"):
        out["ladder.html"] = page(
            "ladder.html", "ladder.html", ladder=_ladder_table(data["ladder"])
        )
    if data["attribution"]:
        out["attribution.html"] = page("attribution.html", "attribution.html")
    for e in data["entries"]:
        out[files[e["id"]]] = page("entry.html", files[e["id"]], e=e)
    return out


def _deltas(
    cmp: Mapping[str, Any], metrics: Sequence[str] | None = None, cats: Sequence[str] = ()
) -> Iterator[Any]:
    """The deltas of a comparison's cells (its `Comparison.to_dict`): those of ``metrics`` in
    the rows ``cats`` when given, as a page shows them (for the key to an end shown as ``>0``)."""
    for row in [*cmp["categories"].values(), cmp["overall"]]:
        if not cats or row["category"] in cats:
            for m, mc in row["metrics"].items():
                if metrics is None or m in metrics:
                    yield mc.get("delta")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _ladder_table(ladder: Mapping[str, Any]) -> dict[str, Any]:
    """A ladder's rows as a header and string cells (nested values flattened, intervals shown
    as ``[low, high]``)."""
    rows = ladder.get("rows") or []
    header: list[str] = []
    body: list[dict[str, str]] = []
    for r in rows if isinstance(rows, list) else []:
        if not isinstance(r, dict):
            continue
        cells: dict[str, str] = {}
        for key, v in r.items():
            if isinstance(v, dict) and "low" in v and "high" in v:
                cells[key] = _ci(v, 3)
            elif isinstance(v, dict):
                for k2, v2 in v.items():
                    cells[f"{key} {k2}"] = _p(v2) if k2.startswith("p") else _num(v2)
            else:
                cells[key] = _num(v)
        for key in cells:
            if key not in header:
                header.append(key)
        body.append(cells)
    return {"header": header, "rows": [[c.get(h, "") for h in header] for c in body]}


def _static() -> dict[str, str]:
    return {
        f"assets/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted((_HERE / "static").iterdir())
        if p.suffix in (".css", ".js")
    }


def render_site(
    bundle: Bundle | Mapping[str, Any], out_dir: str | Path, *, allow_reuse: bool = False
) -> SiteResult:
    """Render the site of ``bundle`` into ``out_dir``, replacing a site written there before.

    The pages are built in a temporary folder beside ``out_dir`` and moved into place only when
    all are written, so a failure leaves no half site. A non-empty ``out_dir`` that is not an
    assay site (no ``.assay-site`` file) is refused rather than replaced.

    The site shows every entry's results: when the bundle's entries are those of a sealed fresh
    sample, rendering it is one use of the sample (refused a second time unless
    ``allow_reuse``; `assay.dataset.fresh.using`), as scoring it is.
    """
    from assay.dataset import fresh

    data = bundle.data if isinstance(bundle, Bundle) else dict(bundle)
    runs = [str(r.get("hash")) for r in data.get("runs") or []]
    with fresh.using(bundle_entries(data), command="report", allow_reuse=allow_reuse, runs=runs):
        return _render(data, out_dir)


def report_site(
    source: str | Path,
    out_dir: str | Path,
    runs: Sequence[str | Path] | None = None,
    *,
    allow_reuse: bool = False,
    **export: Any,
) -> SiteResult:
    """What `assay report` runs: render the site of a bundle file, or (with ``runs``) of a
    golden dataset and its runs, exported and rendered as one use of a sealed fresh sample (the
    dataset read once, the guard entered once, what is below it part of that use)."""
    from assay.dataset import fresh, load_dataset

    if not runs:
        return render_site(load_bundle(source), out_dir, allow_reuse=allow_reuse)
    ds = load_dataset(source)
    hashes = [str(r) for r in runs]
    with fresh.using(ds, command="report", allow_reuse=allow_reuse, runs=hashes) as session:
        return _render(export_bundle(ds, runs, session=session, **export).data, out_dir)


def _render(data: dict[str, Any], out_dir: str | Path) -> SiteResult:
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise UsageError(
            f"{out}: exists and is not an explorer site written by assay; choose an empty or new "
            "folder (nothing was written)"
        )
    pages = _pages(data) | _static()
    sha = hashlib.sha256(canonical_json(data, indent=None).encode()).hexdigest()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for rel, text in sorted(pages.items()):
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8", newline="\n")
        (tmp / MARKER).write_text(f"assay explorer site of bundle {sha}\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    html = sorted(p for p in pages if p.endswith(".html"))
    return SiteResult(str(out), html, sha)
