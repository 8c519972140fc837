"""Screenshots of every workbench task for docs/workbench.md (headless Debian chromium).

    PYTHONPATH=src python docs/tools/workbench_screenshots.py [--out docs/img]

Loads the demo into a temporary store, has two experts label part of it (so that there is
something to adjudicate and agree on), serves it on 127.0.0.1 and drives the pages.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from assay.workbench import service as svc
from assay.workbench.app import WorkbenchConfig, create_app
from assay.workbench.db import Database
from assay.workbench.demo_store import load_demo
from assay.workbench.models import User

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PASS = {"correct": "pass", "complete": "pass", "faithful": "pass", "policy": "pass"}


def seed(db: Database) -> None:
    from sqlalchemy import update

    from assay.workbench.models import Assignment, Task

    with db.read() as s:
        u = {x.username: x for x in s.query(User)}
        pinned = [
            t.id
            for t in s.query(Task).filter(
                Task.item_id == "demo-004", Task.kind.in_(["evidence", "reference"])
            )
        ]
    # ana has the demo-004 evidence and reference tasks open (what the pages below show)
    with db.write() as s:
        for tid in pinned:
            s.add(Assignment(task_id=tid, user_id=u["ana"].id))
            s.execute(update(Task).where(Task.id == tid).values(n_claimed=Task.n_claimed + 1))
    for name in ("ana", "ben"):
        while (t := svc.claim_next(db, u[name], "judge")) is not None:
            with db.read() as s:
                from assay.workbench.models import Task

                task = s.get(Task, t)
                assert task is not None
                item = task.item_id
            verdicts = dict(PASS)
            crit: dict[str, str] = {}
            if item == "demo-004" and name == "ana":
                verdicts["policy"] = "fail"
                crit["policy"] = "Ends with a recommendation to buy the stock."
            if item == "demo-005":
                verdicts["correct"] = "fail" if name == "ben" else "pass"
                if name == "ben":
                    crit["correct"] = (
                        "The 10-K/A restated inventories to $574 million before the as-of date."
                    )
            if item == "demo-002" and name == "ben":
                verdicts["correct"] = "fail"
                crit["correct"] = "1.22% is the 2022 ratio; 2023 was 1.31%."
            svc.submit_label(
                db, u[name], t, {"verdicts": verdicts, "critiques": crit}, client_id=f"{name}{t}"
            )


def main() -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="docs/img")
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        db = Database(f"sqlite:///{Path(d) / 'demo.db'}")
        load_demo(db, fast_hash=True)
        seed(db)
        app = create_app(WorkbenchConfig(db_url=db.url, migrate=False), db=db)
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=8765, log_level="warning")
        )
        th = threading.Thread(target=server.run, daemon=True)
        th.start()
        while not server.started:
            time.sleep(0.05)
        base = "http://127.0.0.1:8765"
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)

            def session(user: str, pw: str) -> Any:
                ctx = b.new_context(viewport={"width": 1440, "height": 900}, device_scale_factor=1)
                pg = ctx.new_page()
                pg.goto(base + "/login")
                if user == "ana":
                    pg.screenshot(path=str(out / "workbench-login.png"))
                pg.fill('input[name="username"]', user)
                pg.fill('input[name="password"]', pw)
                pg.click('button[type="submit"]')
                pg.wait_for_selector("h1")
                return pg

            ana = session("ana", "ana-demo-pw")
            ana.goto(base + "/work/evidence")
            ana.wait_for_selector("body[data-page=evidence]")
            ana.fill("#search-q", "segment revenue")
            ana.select_option("#search-company", "Acme Devices")
            ana.wait_for_selector("#results .chunk")
            ana.locator("#results .chunk").nth(0).locator("button.add-piece").click()
            ana.locator("#results .chunk").nth(1).locator("button.add-alt").click()
            ana.fill(
                "#ev-note", "The segment table and the MD&A sentence both give the 17% growth."
            )
            ana.screenshot(path=str(out / "workbench-evidence.png"))
            ana.click("#submit")
            ana.wait_for_timeout(800)
            ana.goto(base + "/work/reference")
            ana.wait_for_selector("body[data-page=reference]")
            ana.fill(
                "#ref-answer",
                "Sensors: revenue grew 17% to $1,402 million in fiscal 2023 (Controllers +1%, Services +7%).",
            )
            ana.click("#add-fact")
            ana.locator(".fact input[type=text]").last.fill(
                "Sensors was the fastest-growing segment in fiscal 2023"
            )
            ana.locator("#own-evidence .chunk").first.locator("button.add-support").click()
            ana.click("#add-fact")
            ana.locator(".fact input[type=text]").last.fill(
                "Sensors revenue grew 17% (to $1,402 million)"
            )
            ana.locator(".fact input[type=checkbox]").last.uncheck()
            ana.fill("#search-q", "segment revenue")
            ana.click("#search-form button[type=submit]")
            ana.wait_for_selector("#results .chunk")
            ana.locator("#results .chunk").nth(1).locator("button.add-support").click()
            ana.fill(
                "#notes",
                "Growth rounded to 16-17% is fine; naming only the segment passes 'correct' but fails 'complete'.",
            )
            ana.screenshot(path=str(out / "workbench-reference.png"))
            ana.goto(base + "/")
            ana.click("#queue-judge button[type=submit]")  # a timed session: timer in the header
            ana.goto(base + "/")
            ana.screenshot(path=str(out / "workbench-queues.png"))

            cleo = session("admin", "admin-demo-pw")
            cleo.click("#queue-judge button[type=submit]")  # timed session: calibration first
            cleo.wait_for_selector("body[data-page=judge]")
            cleo.keyboard.press("a")
            cleo.keyboard.press("2")
            cleo.keyboard.press("f")
            cleo.keyboard.type("Omits the fiscal 2022 margin the question's context calls for.")
            cleo.keyboard.press("Escape")
            cleo.screenshot(path=str(out / "workbench-judge.png"))

            adj = session("adjudicator", "adjudicator-demo-pw")
            adj.goto(base + "/adjudicate")
            adj.screenshot(path=str(out / "workbench-adjudication-queue.png"))
            adj.locator("#adj-queue tr:has-text('demo-005') a").click()
            adj.wait_for_selector("body[data-page=adjudicate]")
            adj.locator("button.take").nth(1).click()
            adj.select_option("#root-cause", "guideline_gap")
            adj.fill(
                "#guideline-change",
                "An amendment filed before the as-of date supersedes the original filing's figures.",
            )
            adj.fill("#adj-note", "ben is right: the 10-K/A was public on the as-of date.")
            adj.check("#hard-case")
            adj.wait_for_timeout(1800)  # let the toast fade
            adj.evaluate("window.scrollTo(0, 0)")
            adj.screenshot(path=str(out / "workbench-adjudicate.png"))
            adj.click("#adj-submit")
            adj.wait_for_url("**/adjudicate")
            adj.goto(base + "/agreement")
            adj.screenshot(path=str(out / "workbench-agreement.png"))
            adj.goto(base + "/guidelines")
            adj.screenshot(path=str(out / "workbench-guidelines.png"))
            b.close()
        server.should_exit = True
        th.join(10)
        db.dispose()
    for f in sorted(out.glob("workbench-*.png")):
        print(f)


if __name__ == "__main__":
    main()
