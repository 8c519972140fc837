"""The explorer site in Debian's headless Chromium, opened from file://: no console error, no
request that leaves file://, the filter works. Screenshots go to artifacts/explorer (and, with
ASSAY_UPDATE_DOCS_IMG=1, to docs/img for docs/explorer.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM
pytest.importorskip("playwright.sync_api")

from assay.explorer import entry_filenames, export_bundle, render_site  # noqa: E402

from .conftest import ATTRIBUTION, add_sql_entry, write_explorer_case  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ASSAY_ARTIFACTS", ROOT / "artifacts")) / "explorer"
DOCS_IMG = ROOT / "docs" / "img"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("explorer")
    case = write_explorer_case(folder / "case")
    bundle = export_bundle(
        case.dataset,
        case.runs,
        chunks=case.chunks,
        ladder=case.ladder,
        judged={"cand": case.judged},
        n_resamples=200,
        n_permutations=200,
    )
    bundle.data["attribution"]["base"] = ATTRIBUTION
    for e in bundle.data["entries"]:
        for a in ATTRIBUTION["entries"]:
            if a["id"] == e["id"]:
                e["runs"]["base"]["stage"], e["runs"]["base"]["group"] = a["stage"], a["group"]
    return Path(render_site(bundle, folder / "site").out_dir)


class Watched:
    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("request", lambda r: self.requests.append(r.url))

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_load_state("load")

    def check(self) -> None:
        assert self.errors == []
        assert [u for u in self.requests if not u.startswith("file://")] == []


@pytest.fixture
def page(browser: Any) -> Iterator[Watched]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    w = Watched(ctx.new_page())
    yield w
    w.check()
    ctx.close()


def shot(w: Watched, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    w.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5000
    if os.environ.get("ASSAY_UPDATE_DOCS_IMG") == "1":
        w.page.screenshot(path=str(DOCS_IMG / f"{name}.png"), full_page=False)


def test_overview(page: Watched, site: Path) -> None:
    page.open((site / "index.html").as_uri())
    assert page.page.locator("h1").inner_text() == "Overview"
    # one plot per metric (4) and one per answer check a run's report rated
    checks = page.page.locator('figure.plot[id^="c-"] svg').count()
    assert checks > 0 and page.page.locator("figure.plot svg").count() == 4 + checks
    assert page.page.locator("text=not significant").count() > 0
    shot(page, "explorer-overview")


def test_comparison(page: Watched, site: Path) -> None:
    page.open((site / "compare-cand.html").as_uri())
    fixed = page.page.locator("a.id.fixed")
    assert fixed.count() >= 3
    page.page.locator("a.id.broken", has_text="q6").first.click()
    page.page.wait_for_load_state("load")
    assert page.page.url.endswith("/entries/q6.html")
    page.open((site / "compare-cand.html").as_uri())
    shot(page, "explorer-comparison")


def test_entry_page(page: Watched, site: Path) -> None:
    page.open((site / "entries" / "q2.html").as_uri())
    assert page.page.locator("li.hit.gold").count() == 2
    assert "gold 1.1" in page.page.locator("li.hit.gold").first.inner_text()
    assert page.page.locator("td.check.good", has_text="pass").count() > 0
    shot(page, "explorer-entry")


def test_attribution_page(page: Watched, site: Path) -> None:
    page.open((site / "attribution.html").as_uri())
    base = page.page.locator("#att-base")
    assert "lost at recall" in base.inner_text()
    assert base.locator("span.bar").count() > 0
    shot(page, "explorer-attribution")


def test_entries_filter(page: Watched, site: Path) -> None:
    page.open((site / "entries.html").as_uri())
    rows = page.page.locator("#entries tbody tr:not([hidden])")
    assert rows.count() == 7
    page.page.select_option("#f-category", "trend")
    assert rows.count() == 3
    page.page.select_option("#f-run", "1")  # cand
    page.page.select_option("#f-status", "pass")
    assert rows.count() == 1 and "q5" in rows.first.inner_text()
    assert page.page.locator("#f-count").inner_text() == "1 of 7 entries"
    page.page.select_option("#f-category", "")
    page.page.select_option("#f-status", "fail")
    shot(page, "explorer-entries")


def test_sql_entry_diff(page: Watched, tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("sqlglot")
    folder = tmp_path_factory.mktemp("explorer-sql")
    case = write_explorer_case(folder / "case")
    add_sql_entry(case)
    bundle = export_bundle(
        case.dataset, case.runs, chunks=case.chunks, n_resamples=200, n_permutations=200
    )
    site = Path(render_site(bundle, folder / "site").out_dir)
    page.open((site / entry_filenames(["sql:active"])["sql:active"]).as_uri())
    only_gold = page.page.locator("table.sqlrows.only-gold").first
    assert only_gold.is_visible() and "EMEA" in only_gold.inner_text()
    assert page.page.locator("table.sqlrows.only-system tbody tr").count() == 2


@pytest.mark.parametrize("width", [1400, 1280])
def test_overview_fits_the_window(browser: Any, site: Path, width: int) -> None:
    """Every table of the overview (14 answer checks, as in the demo) stays inside a window
    1,400 px wide: the page never scrolls sideways, and a table wider than its box would
    scroll inside that box only."""
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    w = Watched(ctx.new_page())
    w.open((site / "index.html").as_uri())
    # the answer checks' table, the widest: the category and 14 checks (polarity_correct added)
    assert (
        w.page.evaluate("[...document.querySelectorAll('table')].pop().rows[0].cells.length") == 15
    )
    page_width = w.page.evaluate("document.documentElement.scrollWidth")
    tables = w.page.evaluate(
        "Array.from(document.querySelectorAll('table')).map(t => t.getBoundingClientRect().right)"
    )
    w.check()
    ctx.close()
    assert page_width <= width
    if width == 1400:
        assert tables and max(tables) <= width, tables
