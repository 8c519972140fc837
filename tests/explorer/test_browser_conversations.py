"""The explorer's conversation view in Debian's headless Chromium, on a room bundle: the room's
conversations (`assay synth`), run by the filings pipeline with its own history and with none
(`assay run --history`), exported with both runs. The entries list groups the turns under their
conversation and filters by a conversation check; the conversation page shows the turns in
order, both runs side by side and the failing check marked. No console error, no request that
leaves file://. Screenshots go to artifacts/explorer (and, with ASSAY_UPDATE_DOCS_IMG=1, to
docs/img for docs/explorer.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import NEEDS_CHROMIUM

pytestmark = [*NEEDS_CHROMIUM, pytest.mark.slow]
pytest.importorskip("playwright.sync_api")

from assay.cache import RequestCache  # noqa: E402
from assay.corpus import build_corpus  # noqa: E402
from assay.dataset import load_dataset  # noqa: E402
from assay.explorer import conversation_filenames, export_bundle, render_site  # noqa: E402
from assay.runner import run_system  # noqa: E402
from assay.synth.generate import generate_room  # noqa: E402
from assay.systems.filings import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ASSAY_ARTIFACTS", ROOT / "artifacts")) / "explorer"
DOCS_IMG = ROOT / "docs" / "img"


@pytest.fixture(scope="module")
def room_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("room-conversations")
    generate_room(base / "room", formats=("pdf",), seed=11, companies=2, years=2, scans=0)
    build_corpus(base / "room", meta=base / "room" / "documents.jsonl", out_dir=base / "corpus")
    ds = load_dataset(base / "room" / "conversations.jsonl")
    system = build(base / "corpus", mode="full", ranker="bm25", rerank=False)
    runs = []
    for mode in ("own", "none"):
        runs.append(base / f"{mode}.jsonl")
        run_system(
            ds, system, history=mode, out=runs[-1], progress=False,
            cache=RequestCache(base / "c.sqlite", enabled=False),
        )  # fmt: skip
    bundle = export_bundle(
        ds.path or "",
        runs,
        chunks=base / "corpus" / "chunks.jsonl",
        n_resamples=200,
        n_permutations=200,
    )
    return Path(render_site(bundle, base / "site").out_dir), bundle.data


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    requests: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("request", lambda r: requests.append(r.url))
    yield pg
    assert errors == []
    assert [u for u in requests if not u.startswith("file://")] == []
    ctx.close()


def shot(pg: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5000
    if os.environ.get("ASSAY_UPDATE_DOCS_IMG") == "1":
        pg.screenshot(path=str(DOCS_IMG / f"{name}.png"), full_page=False)


def _failing(data: dict[str, Any]) -> dict[str, Any]:
    """A conversation of three turns whose follow-up the run without history fails on
    kept_context and the run with its own history passes."""
    for c in data["conversations"]:
        v = {r: c["runs"][r]["verdicts"].get("kept_context") for r in ("own", "none")}
        if len(c["turns"]) == 3 and v == {"own": "pass", "none": "fail"}:
            return c
    raise AssertionError("no conversation that history alone passes")


def test_the_entries_list_filters_conversations_by_check(
    page: Any, room_site: tuple[Path, dict[str, Any]]
) -> None:
    site, data = room_site
    conv = _failing(data)
    page.goto((site / "entries.html").as_uri())
    n_conv = len(data["conversations"])
    assert page.locator("tr.conv").count() == n_conv
    page.select_option("#f-run", label="none")
    page.select_option("#f-check", "kept_context")
    page.select_option("#f-verdict", "fail")
    failing = [c for c in data["conversations"] if c["runs"]["none"]["verdicts"].get("kept_context") == "fail"]  # fmt: skip
    assert 0 < len(failing) < n_conv
    assert page.locator("tr.conv:visible").count() == len(failing)
    turns = page.locator(f'tr.turn[data-conv="{conv["id"]}"]:visible')
    assert turns.count() == 3
    assert page.locator("#f-count").inner_text().endswith(f"of {n_conv} conversations)")
    page.select_option("#f-run", label="own")  # history: far fewer fail it
    assert page.locator("tr.conv:visible").count() < len(failing)
    page.select_option("#f-run", label="none")
    shot(page, "explorer-conversation-entries")
    page.locator(f'tr.conv[data-conv="{conv["id"]}"] a.conv-link').click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/" + conversation_filenames([conv["id"]])[conv["id"]])


def test_the_conversation_page_shows_turns_and_the_failing_check(
    page: Any, room_site: tuple[Path, dict[str, Any]]
) -> None:
    site, data = room_site
    conv = _failing(data)
    page.goto((site / conversation_filenames([conv["id"]])[conv["id"]]).as_uri())
    assert page.locator("h1").inner_text() == f"conversation {conv['id']}"
    turns = page.locator("section.turn")
    assert turns.count() == 3
    by_id = {e["id"]: e for e in data["entries"]}
    for i, tid in enumerate(conv["turns"]):
        turn = turns.nth(i)
        assert turn.get_attribute("id") == f"turn-{i + 1}"
        assert turn.locator("p.query").inner_text() == by_id[tid]["query"]
        assert turn.locator("section.run").count() == 2  # own and none side by side
    # the follow-up the run without history fails: kept_context marked on its column
    bad = [
        i for i, tid in enumerate(conv["turns"])
        if by_id[tid]["runs"]["none"]["checks"].get("kept_context") is False
    ]  # fmt: skip
    assert bad
    follow = turns.nth(bad[0])
    none_cell = follow.locator('section.run[data-run="none"] tr', has_text="kept_context")
    assert none_cell.locator("td.check.bad").inner_text() == "fail"
    own_cell = follow.locator('section.run[data-run="own"] tr', has_text="kept_context")
    assert own_cell.locator("td.check.good").inner_text() == "pass"
    # the roll-up: kept_context fails the conversation for none, at the turn marked
    roll = page.locator('#rollup tr[data-score="kept_context"] td.roll')
    assert "good" in (roll.nth(0).get_attribute("class") or "")
    assert "bad" in (roll.nth(1).get_attribute("class") or "")
    assert f"fails at turn {bad[0] + 1}" in roll.nth(1).inner_text()
    # the turn it depends on is linked, and the link goes there
    dep = by_id[conv["turns"][bad[0]]]["conversation"]["depends_on"][0]
    follow.locator(f'a[href="#turn-{dep}"]').click()
    assert page.url.endswith(f"#turn-{dep}")
    page.goto(page.url.split("#")[0])
    shot(page, "explorer-conversation")
