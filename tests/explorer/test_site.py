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
    assert index.count("<svg") == 4  # one plot per metric, drawn at build time
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
        'numbers_verified</td><td class="check pass">pass',
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
