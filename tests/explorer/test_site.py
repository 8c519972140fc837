"""The explorer site: its pages, same bundle -> same bytes, offline, and its folder rules."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from assay.errors import UsageError
from assay.explorer import MARKER, Bundle, entry_filenames, export_bundle, render_site

from .conftest import ATTRIBUTION, Case, write_explorer_case

FAST = {"n_resamples": 200, "n_permutations": 200}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundle, Path]:
    """One bundle and its site for the tests that only read them."""
    case = write_explorer_case(tmp_path_factory.mktemp("case"))
    b = export_bundle(
        case.dataset,
        case.runs,
        chunks=case.chunks,
        ladder=case.ladder,
        judged={"cand": case.judged},
        **FAST,
    )
    # the attribution page is rendered from the dict alone: a hand-built one of the agreed shape
    b.data["attribution"]["base"] = ATTRIBUTION
    for e in b.data["entries"]:
        for a in ATTRIBUTION["entries"]:
            if a["id"] == e["id"]:
                e["runs"]["base"]["stage"], e["runs"]["base"]["group"] = a["stage"], a["group"]
    site = tmp_path_factory.mktemp("built") / "site"
    render_site(b, site)
    return b, site


@pytest.fixture
def bundle(built: tuple[Bundle, Path]) -> Bundle:
    return built[0]


@pytest.fixture
def site(built: tuple[Bundle, Path]) -> Path:
    return built[1]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_same_bundle_same_bytes(bundle: Bundle, site: Path, tmp_path: Path) -> None:
    a = render_site(bundle, tmp_path / "a")
    ta, tb = _tree(tmp_path / "a"), _tree(site)
    assert ta == tb
    assert (
        len(a.pages) == 7 + 7
    )  # overview, entries, 2 comparisons, leaderboard, ladder, attribution
    assert "index.html" in ta and "assets/filter.js" in ta and MARKER in ta


def test_pages_never_reach_the_network(site: Path) -> None:
    for name, raw in _tree(site).items():
        text = raw.decode()
        # every src/href is relative; no CSS import or url() from elsewhere
        for ref in re.findall(r'(?:src|href)="([^"]*)"', text):
            assert not re.match(r"^[a-z]+:|^//", ref), (name, ref)
        assert "@import" not in text, name
        assert re.findall(r"url\((?!#)", text) == [], name  # SVG clip paths are url(#local)


def test_overview_comparison_leaderboard_ladder(bundle: Bundle, site: Path) -> None:
    index = (site / "index.html").read_text()
    # one plot per metric and one per answer check a run's report rated, drawn at build time
    rated = {
        c
        for rep in bundle.data["checks"].values()
        for c, cell in rep["rates"]["overall"].items()
        if cell["rate"] is not None
    }
    assert rated and index.count("<svg") == 4 + len(rated)
    assert all(f'id="c-{c}"' in index for c in rated)
    assert "not significant" in index  # 7 entries: nothing is significant
    assert "[0." in index  # intervals beside values
    cmp = (site / "compare-cand.html").read_text()
    files = entry_filenames([e["id"] for e in bundle.data["entries"]])
    for eid in ("q2", "q3", "q5"):
        assert f'class="id fixed" href="{files[eid]}"' in cmp
    assert f'class="id broken" href="{files["q6"]}"' in cmp
    assert "p Holm" in cmp
    board = (site / "leaderboard.html").read_text()
    assert board.index(">cand<") < board.index(">third<")
    ladder = (site / "ladder.html").read_text()
    assert "+filters" in ladder and "[0.360, 0.920]" in ladder


def test_no_key_to_an_end_past_0_where_none_is_shown(site: Path) -> None:
    from assay.compare.render import ROUNDS_TO_ZERO

    for page in sorted(site.rglob("*.html")):
        text = html.unescape(re.sub(r"<[^>]+>|\s+", " ", page.read_text()))
        assert "[>0," not in text and ", <0]" not in text, page  # no end here rounds to 0
        assert ROUNDS_TO_ZERO not in " ".join(text.split()), page


def test_attribution_page_from_the_dict(site: Path, built: tuple[Bundle, Path]) -> None:
    page = (site / "attribution.html").read_text()
    base = page[page.index('id="att-base"') : page.index('id="att-cand"')]
    assert "Stages this run's trace could not show: rerank" in base
    # the funnel: stages in pipeline order, counts per category, the entries lost at each
    assert base.index(">chunk<") < base.index(">recall<")
    assert re.search(r"<td>lookup</td><td>1</td>", base)
    assert 'href="entries/q4.html" title="group 1.1">q4</a>' in base
    # cand's attribution is assay.attribution's own: each entry it lost links with its piece
    cand = page[page.index('id="att-cand"') :]
    lost = [e for e in built[0].data["attribution"]["cand"]["entries"] if e["stage"]]
    assert lost and all(
        f'title="group {e["piece"]}">{html.escape(e["id"])}</a>' in cand for e in lost
    )
    entry = (site / "entries" / "q4.html").read_text()
    assert "lost at <b>recall</b> (group 1.1)" in entry


def test_entry_page(site: Path) -> None:
    page = (site / "entries" / "q2.html").read_text()
    for text in (
        "What does acme-10k say on page 2?",
        "2024-03-31",
        "<b>acme-10k</b> page 2: <q>Operating margin was 14.2% in fiscal 2023</q>",
        '<span class="goldmark">gold 1.1</span>',
        'numbers_verified</td><td class="check good">pass',
        "The answer to q2 is in its cited span.",
    ):
        assert text in page, text
    assert page.count('class="hit gold"') == 2  # cand and third found it, base did not
    # an id with a slash gets a safe, distinct file name
    files = entry_filenames(["q7/both margins", "q7_both_margins"])
    assert len(set(files.values())) == 2 and all("/" not in f[8:] for f in files.values())


def test_folder_rules(bundle: Bundle, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an explorer site"):
        render_site(bundle, other)
    assert (other / "notes.txt").read_text() == "mine" and len(list(other.iterdir())) == 1
    site = tmp_path / "site"
    render_site(bundle, site)
    (site / "stale.html").write_text("old")
    render_site(bundle, site)  # a site is replaced whole
    assert not (site / "stale.html").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_single_run_site(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = export_bundle(case.dataset, case.runs[:1], chunks=case.chunks, **FAST)
    res = render_site(b, tmp_path / "one")
    names: list[Any] = [p for p in res.pages if not p.startswith("entries/")]
    assert names == ["attribution.html", "entries.html", "index.html"]


def test_error_checks_drawn_by_direction(bundle: Bundle, tmp_path: Path) -> None:
    """An error check's False (no error happened) is a green "ok", its True a red sentence
    saying what happened; a pass-type check stays pass/fail; ``refused`` is a fact."""
    import copy

    data = copy.deepcopy(bundle.data)
    entry = next(e for e in data["entries"] if e["id"] == "q2")
    entry["runs"]["cand"]["checks"]["not_disclosed_unsupported"] = True
    site = render_site(data, tmp_path / "site").index.parent
    page = (site / "entries" / "q2.html").read_text()
    assert 'abstained_when_should_answer</td><td class="check good">ok<' in page
    assert 'refused</td><td class="check fact">answered<' in page
    assert 'answer_correct</td><td class="check good">pass<' in page
    assert (
        'not_disclosed_unsupported</td><td class="check bad">asserts the filings do not '
        "disclose something although the entry is answerable<"
    ) in page
    assert not re.search(r'class="check [a-z]+">fail<', page)
    overview = (site / "index.html").read_text()
    assert "abstained_<wbr>when_<wbr>should_<wbr>answer" in overview
    assert overview.count("(error rate)") == 3


def test_check_cell_follows_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.explorer.site import check_cell, check_is_error
    from assay.judge import check_names, get_check
    from assay.judge.registry import check, unregister

    errors = [n for n in check_names() if check_is_error(n)]
    assert {
        "answered_when_should_abstain",
        "abstained_when_should_answer",
        "not_disclosed_unsupported",
    } <= set(errors)
    for n in errors:
        assert get_check(n).description.startswith("Error:"), n
        assert check_cell(n, False) == ("good", "ok")
        cls, words = check_cell(n, True)
        assert cls == "bad" and words not in ("pass", "fail", "ok") and "Error" not in words
    assert check_cell("abstained_when_should_answer", True) == (
        "bad",
        "declined an entry that should be answered",
    )
    assert check_cell("refusal_ok", False) == ("bad", "fail")
    assert check_cell("refusal_ok", None) == ("abstain", "abstain")
    assert check_cell("refused", True) == ("fact", "refused")

    # a plug-in check: pass-type unless it says higher_is_better=False; unknown: pass-type
    @check("plugin_harm", higher_is_better=False, default=False, description="Error: did harm.")
    def _harm(ctx: Any) -> bool:
        return False

    try:
        assert check_cell("plugin_harm", True) == ("bad", "did harm")
        assert check_cell("no_such_check_here", False) == ("bad", "fail")
    finally:
        unregister("plugin_harm")


def test_overview_names_the_interval_the_cli_names(case: Case, tmp_path: Path) -> None:
    """The overview says how its intervals were drawn in the words `assay score` prints for
    the same scores (RetrievalScores._ci_words), and those of `assay check` for the checks."""
    from assay.dataset import load_dataset
    from assay.judge.report import CI_METHOD
    from assay.runs import load_run
    from assay.score import score_retrieval

    b = export_bundle(case.dataset, case.runs, chunks=case.chunks, seed=11, **FAST)
    site = render_site(b, tmp_path / "site").index.parent
    text = html.unescape(re.sub(r"\s+", " ", (site / "index.html").read_text()))
    from assay.dataset import clustering_for
    from assay.score import ci_words

    ds = load_dataset(case.dataset)
    s = score_retrieval(ds, load_run(case.runs[0]), k=b.data["k"], chunks=case.chunks)
    # the bundle clusters its scores as `assay score` does by default (several questions on
    # one document): the overview names the cluster intervals, not the entry-level ones
    s.add_ci(seed=11, n_resamples=200, clusters=clustering_for(ds.entries))
    assert b.data["clustering"] is not None and s.clustering is not None
    words = s._ci_words()
    assert "each cluster one draw" in words
    assert f"({words})" in text
    assert ci_words("score", 11, "auto") not in text
    assert words in "\n".join(s.tabular().footer)
    assert "bootstrap over entries on graded" not in text
    assert CI_METHOD in text


def test_comparison_names_its_delta_intervals_as_compare_does(case: Case, tmp_path: Path) -> None:
    """The comparison page says how its delta intervals were drawn in the words `assay
    compare` prints for the same two runs and settings."""
    from assay.compare import compare_files

    b = export_bundle(case.dataset, case.runs[:2], chunks=case.chunks, seed=5, **FAST)
    site = render_site(b, tmp_path / "site").index.parent
    text = html.unescape(re.sub(r"\s+", " ", (site / "compare-cand.html").read_text()))
    # this case's dataset has several entries per document: by default both cluster by
    # document and say so in the same words; with cluster="none" both are entry-level
    for how, start in (
        ("auto", "95% CI: Obuchowski's statistic inverted against t(K-1)"),
        ("none", "95% CI: Tango score on binary metrics"),
    ):
        if how == "none":
            b = export_bundle(
                case.dataset, case.runs[:2], chunks=case.chunks, seed=5, cluster="none", **FAST
            )
            site = render_site(b, tmp_path / "flat").index.parent
            text = html.unescape(re.sub(r"\s+", " ", (site / "compare-cand.html").read_text()))
        cmp = compare_files(
            case.dataset, case.runs[0], case.runs[1], chunks=case.chunks, record=False, seed=5,
            cluster=how, **FAST,
        )  # fmt: skip
        cli = next(line for line in cmp.header_lines() if "CI:" in line)
        words = cli.split(";")[0]
        assert words.startswith(start)
        assert words in text


COUNT_CHECK = '''
"""A count check shipped in its own distribution: how many words the answer has."""
from assay.judge import Check

CITED = Check(
    "answer_words",
    lambda ctx: None if ctx.answer is None else len(ctx.answer.split()),
    "How many words the answer has.",
    kind="count",
    higher_is_better=False,
)
'''


def test_a_plugin_check_is_drawn_on_the_overview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check from another distribution is plotted like the built-in ones, its kind (a count,
    drawn past 1) and its direction (lower is better) read from its registration."""
    from tests.test_plugins import make_distribution

    from assay.judge.registry import _REGISTRY as CHECKS

    site_dir = tmp_path / "site-packages"
    make_distribution(
        site_dir,
        "assay-words",
        {"assay_words": COUNT_CHECK},
        {"assay.checks": {"answer_words": "assay_words:CITED"}},
    )
    monkeypatch.syspath_prepend(str(site_dir))
    CHECKS.reset_plugins()
    try:
        case = write_explorer_case(tmp_path / "case")
        b = export_bundle(case.dataset, case.runs, chunks=case.chunks, **FAST)
        render_site(b, tmp_path / "out")
    finally:
        CHECKS.remove("answer_words")
        CHECKS.reset_plugins()
    index = (tmp_path / "out" / "index.html").read_text()
    figure = index[index.index('<figure class="plot" id="c-answer_words">') :]
    figure = figure[: figure.index("</figure>")]
    assert "<svg" in figure and "answer_words per category" in figure
    assert "answer_words (95% interval; lower is better)" in figure  # the axis, from the registry
    rate = b.data["checks"]["cand"]["rates"]["overall"]["answer_words"]["rate"]
    assert rate > 1  # a count: the axis reaches past a share's [0, 1]
