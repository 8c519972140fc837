"""The documentation holds: every command has help and a line in the command reference (as
sqlite-utils does); the site builds with ``mkdocs build --strict``; every shell example of
docs/ and the README runs against a small fixture with the output shown, is generated from the
code (cog), or carries a marker saying why it cannot run (docs/tools/docexamples.py holds the
conventions)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import assay.cli._register  # noqa: F401
from assay.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _leaves(cmd: Any, prefix: list[str]) -> Iterator[tuple[str, Any]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        yield " ".join(prefix), cmd
        return
    for name, sub in sorted(subs.items()):
        yield from _leaves(sub, [*prefix, name])


COMMANDS = dict(_leaves(typer.main.get_command(app), []))


def test_there_are_commands() -> None:
    assert {"validate", "run", "score", "schema"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    assert (COMMANDS[name].help or "").strip(), f"assay {name} has no help text"
    res = CliRunner().invoke(app, [*name.split(), "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


def _outside_cog(text: str) -> str:
    """``text`` without what cog generated (so a hand-written line is asked for, not the list
    generated from the command line itself)."""
    return re.sub(r"\[\[\[cog.*?\[\[\[end\]\]\]", "", text, flags=re.S)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_in_the_command_reference(name: str) -> None:
    text = _outside_cog((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert re.search(rf"`assay {re.escape(name)}(\s|`)", text), (
        f"docs/cli.md does not document `assay {name}` in its table by task"
    )


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?:docs|bench)/[^)#]+)", readme)
    assert targets
    for target in targets:
        assert (ROOT / target).exists(), target


def test_every_source_path_in_the_docs_exists() -> None:
    """A page that names a file under src/ (a module to read, to copy or to import from) names
    one that is there: a plug-in author sent to a missing file is lost."""
    found = 0
    missing: list[str] = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"(?<![\w/.-])src/[\w./-]*[\w/]", text):
            found += 1
            if not (ROOT / m.group(0)).exists():
                line = text.count("\n", 0, m.start()) + 1
                missing.append(f"{page.relative_to(ROOT)}:{line}: {m.group(0)}")
    assert found > 10
    assert missing == []


def test_the_readme_is_read_in_five_minutes() -> None:
    """At most 300 lines, and every page of the site is linked from it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name not in ("index.md", "api.md"):
            assert f"](docs/{page.name})" in readme, page.name


def test_every_extra_is_in_the_readme_install_table() -> None:
    """Each optional-dependency group of pyproject.toml has a row saying what it adds."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    readme = (root / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w-]+)` \| \S", readme, flags=re.MULTILINE))
    assert sorted(set(extras) - rows) == []


def test_make_demo_needs_only_the_core_install() -> None:
    """`make demo` installs the core only (`pip install -e .`), so every step it runs must find
    its packages there: the gold SQL step (`assay demo --sql`) needs sqlglot and DuckDB, which
    were once only in the `sql` extra, and the step was skipped from a core install."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    make = (root / "Makefile").read_text(encoding="utf-8")
    demo = make[make.index("\ndemo:") :].split("\n\n")[0]
    core = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "dependencies"
    ]
    names = {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in core}
    if "--sql" in demo:
        assert {"sqlglot", "duckdb"} <= names, names
    if "--logs" in demo:
        assert "duckdb" in names, names


SCORES = ROOT / "docs" / "scores.md"


def test_readme_metric_and_check_tables_are_the_registries() -> None:
    """The tables of metrics and checks (docs/scores.md) are what the registries say
    (`python -m assay.reference docs/scores.md` rewrites them)."""
    from assay.reference import check_table, metric_table, render_readme

    text = SCORES.read_text(encoding="utf-8")
    assert render_readme(text) == text, (
        "docs/scores.md tables are stale: python -m assay.reference docs/scores.md"
    )
    for table in (metric_table(), check_table()):
        assert table in text
    assert "| `answer_correct` | binary: exact McNemar | higher | yes |" in check_table()
    assert "| `complete@k` | binary: exact McNemar | yes |" in metric_table()


def test_the_readme_tables_follow_a_change_in_a_registry() -> None:
    """A built-in check redescribed changes the rendered table (the test above then fails until
    the README is regenerated); a check from outside assay (a plug-in's, a test's) is not listed."""
    from dataclasses import replace

    from assay.judge import check, get_check, unregister
    from assay.judge.registry import _REGISTRY
    from assay.reference import render_readme

    text = SCORES.read_text(encoding="utf-8")
    real = get_check("fiscal_year_ok")
    _REGISTRY["fiscal_year_ok"] = replace(real, description="Redescribed.")
    try:
        changed = render_readme(text)
        assert (
            changed != text
            and "| `fiscal_year_ok` | binary: exact McNemar | higher | yes | Redescribed. |"
            in changed
        )
    finally:
        _REGISTRY["fiscal_year_ok"] = real

    @check("cites_anything", default=False)
    def _cites(ctx: Any) -> bool:
        """The answer cites a chunk."""
        return bool(ctx.citations)

    try:
        assert render_readme(text) == text
    finally:
        unregister("cites_anything")
    with pytest.raises(ValueError, match="registry:metrics"):
        render_readme("no markers here")


# -- the site and its examples ------------------------------------------------------------------

sys.path.insert(0, str(ROOT / "docs" / "tools"))
import docexamples as examples  # noqa: E402  (the conventions, the runner, the cog helpers)

PAGES = examples.doc_files()


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` (as `make docs` runs it): every page in the navigation, every link
    and anchor resolved, every API reference found."""
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings")
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "compare-and-gate" / "index.html").exists()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_system" in api and "score_retrieval" in api


def test_every_page_is_in_the_navigation() -> None:
    """mkdocs lists a page left out of `nav` only as information: here it is an error."""
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:", lambda loader, suffix, node: None)
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)

    def leaves(node: Any) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for n in node:
                yield from leaves(n)
        elif isinstance(node, dict):
            for v in node.values():
                yield from leaves(v)

    nav = set(leaves(config["nav"]))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert sorted(pages - nav) == []
    assert sorted(nav - pages) == []


def test_every_shell_example_is_run_generated_or_marked() -> None:
    """A fenced shell block runs in CI, is written by cog, or says why it cannot run; a shell
    example in an indented block (which nothing would run) is refused."""
    unfenced = [f"{_rel(p)}:{n}" for p in PAGES for n in examples.unfenced_shell(p)]
    assert unfenced == [], "fence these as ```console (or mark them): " + ", ".join(unfenced)
    shell = examples.shell_blocks()
    assert shell
    for b in shell:
        assert not (b.generated and b.not_run), f"{b.where}: generated and marked not run"
        if b.not_run is not None:
            assert len(b.not_run) >= 10, f"{b.where}: say why it cannot run, not {b.not_run!r}"
        if not b.generated and b.not_run is None:
            assert examples.steps(b), f"{b.where}: a shell block with no command"
    run = [b for b in shell if not b.generated and b.not_run is None]
    assert len(run) >= 10, len(run)


def test_the_example_matcher() -> None:
    """`...` alone takes any number of lines, inside a line any text; nothing else is loose."""
    m = examples.matches
    assert m(["a", "...", "d"], ["a", "b", "c", "d"])
    assert m(["a", "...", "d"], ["a", "d"])
    assert m(["took ...s"], ["took 1.5s"])
    assert not m(["a", "d"], ["a", "b", "d"])
    assert not m(["a", "b"], ["a", "b", "c"])
    assert not m(["x ...s"], ["y 1s"])
    assert not m(["a", "...", "d"], ["a", "b"])


@pytest.fixture(scope="session")
def small_room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The README's small room, built once: (its folder, what building it printed). The figures
    the docs show are those of a room with scanned pages, which needs an OCR engine (`.ci/run`
    installs Debian's tesseract-ocr); without one the room has none and the figures differ."""
    from assay.corpus import ocr

    if not ocr.available():
        pytest.skip("no OCR engine: install tesseract-ocr (as .ci/run does) to run the examples")
    where = tmp_path_factory.mktemp("docs-room")
    reg = tmp_path_factory.mktemp("docs-fresh") / "fresh.sqlite"
    old = os.environ.get("ASSAY_FRESH_REGISTRY")
    os.environ["ASSAY_FRESH_REGISTRY"] = str(reg)
    try:
        output = examples.build_small_room(where)
    finally:
        if old is None:
            os.environ.pop("ASSAY_FRESH_REGISTRY", None)
        else:
            os.environ["ASSAY_FRESH_REGISTRY"] = old
    return where / "out" / "small", output


RUN_PAGES = sorted(
    {_rel(b.path) for b in examples.shell_blocks() if not b.generated and b.not_run is None}
)


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_shell_examples_run(page: str, small_room: tuple[Path, str], tmp_path: Path) -> None:
    """Each page's examples run in order in a working directory of their own (the small room
    copied in where a block asks for it), each exits as shown and prints what is shown."""
    room, built = small_room
    shell = examples.Shell(tmp_path, room=room)
    problems: list[str] = []
    for b in examples.shell_blocks():
        if b.path == ROOT / page and not b.generated and b.not_run is None:
            problems += examples.run_block(b, shell, room_output=built)
    assert problems == [], "\n\n".join(problems)


@pytest.mark.slow
def test_the_generated_parts_are_current(small_room: tuple[Path, str]) -> None:
    """`cog --check` over every page with generated parts (command lists, transcripts, the
    comparison key): what the code says today is what the page shows."""
    from cogapp import Cog

    files = [_rel(p) for p in PAGES if "[[[cog" in p.read_text(encoding="utf-8")]
    assert "docs/cli.md" in files and "docs/compare-and-gate.md" in files
    old = Path.cwd()
    os.chdir(ROOT)
    out, err = io.StringIO(), io.StringIO()
    try:
        cog = Cog()
        cog.set_output(stdout=out, stderr=err)
        status = cog.main(
            [
                "cog",
                "--check",
                "--diff",
                "-I",
                "docs/tools",
                "-D",
                f"docs_room={small_room[0]}",
                *files,
            ]
        )
    finally:
        os.chdir(old)
    assert status == 0, (
        out.getvalue() + err.getvalue() + "\nregenerate: cog -r -I docs/tools " + " ".join(files)
    )


def test_the_files_the_docs_name_exist() -> None:
    """A path the docs name (`src/...`, `tests/...`, `bench/...` in prose, or as the file a code
    example belongs to) exists, unless the example says it is a new module: a plug-in author
    sent to `src/assay/policy.py` found nothing there."""
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        named = re.findall(r"`((?:src|tests|bench|docs|scripts)/[\w./-]*\w)`", text)
        headers = re.findall(r"^# ((?:src|tests|bench)/[\w./-]+\.py)(.*)$", text, flags=re.M)
        named += [path for path, rest in headers if "(a new module)" not in rest]
        missing += [f"{_rel(page)}: {p}" for p in named if not (ROOT / p).exists()]
    assert missing == []


def _block(text: str, lang: str = "console") -> Any:
    return examples.Block(ROOT / "README.md", 1, lang, text)


def test_a_failing_command_must_show_its_exit_code(tmp_path: Path) -> None:
    """A command that exits non-zero is a problem unless `echo $?` shows the code; the code shown
    must be the one it exited with; output is compared line by line."""
    (tmp_path / "bad.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    bad = "$ assay validate bad.jsonl\n...\n"
    assert examples.run_block(_block(bad), examples.Shell(tmp_path))
    assert examples.run_block(_block(bad + "$ echo $?\n1\n"), examples.Shell(tmp_path)) == []
    assert examples.run_block(_block(bad + "$ echo $?\n2\n"), examples.Shell(tmp_path))
    assert examples.run_block(
        _block("$ assay validate bad.jsonl\nok\n$ echo $?\n1\n"), examples.Shell(tmp_path)
    )
    assert examples.run_block(_block("assay validate bad.jsonl\n", "sh"), examples.Shell(tmp_path))
    assert (
        examples.run_block(_block('$ cat bad.jsonl\n{"id": "a"}\n'), examples.Shell(tmp_path)) == []
    )


def test_a_pages_commands_leave_the_users_ledger_index_and_registry_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transcript's `assay compare` (which records to the ledger, and so to the per-user
    ledger index) writes its index and fresh registry in the page's own folder, whether it runs
    in process or through bash, never in the user's ``$XDG_DATA_HOME/assay``."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ASSAY_LEDGER_INDEX", raising=False)
    monkeypatch.delenv("ASSAY_FRESH_REGISTRY", raising=False)
    case = examples.Transcripts(examples.statistics_case)
    case.block(["assay compare golden.jsonl base.jsonl cand.jsonl --k 5"])
    case.block(["assay compare golden.jsonl base.jsonl cand.jsonl --k 5 | head -1"])
    assert not (tmp_path / "xdg").exists()
    index = (case.dir / ".state" / "ledgers.jsonl").read_text(encoding="utf-8")
    assert len(index.splitlines()) >= 1


def _compare_key_and_transcript(page: str) -> tuple[str, str]:
    """The prose paragraph that introduces a page's first `assay compare` transcript, and the
    transcript (up to its closing fence)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    at = text.index("$ assay compare ")
    paragraphs = [p.strip() for p in text[:at].split("\n\n")]
    key = next(p for p in reversed(paragraphs) if p and not p.startswith(("<!--", "```")))
    return " ".join(key.split()), text[at : text.index("```", at)]


@pytest.mark.parametrize("page", ["README.md", "docs/compare-and-gate.md"])
def test_the_compare_key_names_the_test_its_transcript_runs(page: str) -> None:
    # the small room asks several questions of each document, so compare clusters by document
    # by default: the key must not present the entry-level McNemar test as the p column's
    key, transcript = _compare_key_and_transcript(page)
    if "Clustered by" in transcript or "--cluster none" not in transcript:
        assert "cluster" in key, key
        assert "the exact McNemar p-value on those flips" not in key, key
    assert "exactly when its own score test" not in key, key  # the CI follows p, not its own test
