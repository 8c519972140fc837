"""The shell examples of the documentation: found, run, compared, and generated for cog.

Conventions (summed up in README.md, "Development"):

- A shell example is a fenced block tagged ``console`` (``$ `` before each command, what it prints
  below it), or ``sh`` / ``bash`` / ``shell`` (commands only; each must exit 0).
- ``...`` on a line of its own stands for any number of lines left out; inside a line, for any
  text (a timing, a path).
- A command that exits non-zero must be followed by ``$ echo $?`` showing its code.
- Commands run in a working directory of their own per page, in order, so ``$ cd out/small`` holds
  for the page's later blocks. ``assay ...`` runs in-process (typer's CliRunner); ``cd``, ``cat``,
  ``head -N`` and ``echo $?`` are played here; anything else runs under ``bash -c`` with ``assay``
  on PATH.
- ``<!-- docs: not run: REASON -->`` on the line above a block says why it cannot run in CI (a
  server, a GPU, FinanceBench, minutes of work). ``<!-- docs: fixture small-room -->`` marks the
  block whose first command is `SMALL_ROOM`: it is played from the session's one build of the
  small room instead of building it again.
- A block between ``[[[cog`` and ``[[[end]]]`` markers is generated from the code (`transcript`,
  registries, ``--help``); ``cog --check`` keeps it true and it is not run again.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGS = {"console", "sh", "bash", "shell"}
SMALL_ROOM = "assay demo --companies 2 --years 2 --out out/small"
NOT_RUN = re.compile(r"<!--\s*docs:\s*not run:\s*(.+?)\s*-->")
FIXTURE = re.compile(r"<!--\s*docs:\s*fixture\s+small-room\s*-->")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    not_run: str | None = None
    fixture: bool = False
    generated: bool = False

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced code block of a Markdown file, with its marker and whether cog wrote it."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    in_cog = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "[[[cog" in line:
            in_cog = True
        if "[[[end]]]" in line:
            in_cog = False
        m = FENCE.match(line)
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = [ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[i + 1 : j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        above = lines[k] if k >= 0 else ""
        nr = NOT_RUN.search(above)
        out.append(
            Block(
                path,
                i + 1,
                lang,
                "\n".join(body),
                not_run=nr.group(1) if nr else None,
                fixture=bool(FIXTURE.search(above)),
                generated=in_cog,
            )
        )
        i = j + 1
    return out


def shell_blocks() -> list[Block]:
    """Every shell example: blocks tagged as shell, and untagged ones that open with a ``$ ``
    prompt (read as ``console``)."""
    out = []
    for p in doc_files():
        for b in blocks(p):
            if not b.lang and b.text.lstrip().startswith("$ "):
                b.lang = "console"
            if b.lang in SHELL_LANGS:
                out.append(b)
    return out


SHELLISH = re.compile(r"^(\$ |assay |make |python |pip |cog |\.venv/bin/|[A-Z_][A-Z0-9_]*=\S* )")


def unfenced_shell(path: Path) -> list[int]:
    """Lines of indented code blocks (outside fences) that hold shell commands: these must be
    fenced ``console`` / ``sh`` blocks, so that they are run or marked."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[int] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        prev = lines[i - 1] if i else ""
        indented = len(line) - len(line.lstrip(" ")) >= 4  # a code block, or one in a list item
        if indented and not prev.strip() and SHELLISH.match(line.lstrip(" ")):
            found.append(i + 1)
    return found


def steps(block: Block) -> list[Step]:
    """A console block's commands, each with the lines it is shown to print; an sh block's
    commands (continuation lines joined), with nothing shown."""
    out: list[Step] = []
    lines = block.text.split("\n")
    if block.lang == "console":
        for line in lines:
            if line.startswith("$ "):
                out.append(Step(line[2:]))
            elif out and out[-1].command.endswith("\\"):
                out[-1].command = out[-1].command[:-1] + " " + line.strip()
            elif out:
                out[-1].expected.append(line)
    else:
        cmd = ""
        for line in lines:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            cmd = (cmd + " " + s) if cmd else s
            if cmd.endswith("\\"):
                cmd = cmd[:-1].rstrip()
                continue
            out.append(Step(cmd))
            cmd = ""
    for s in out:
        while s.expected and not s.expected[-1].strip():
            s.expected.pop()
    return out


def _line_pattern(expected: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in expected.rstrip().split("...")]
    return re.compile(".*".join(parts) + r"\Z", re.S)


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` against ``actual`` line by line: a line ``...`` takes any number of lines,
    ``...`` inside a line any text; otherwise lines are equal up to trailing space."""
    act = [a.rstrip() for a in actual]
    while act and not act[-1]:
        act.pop()
    pats = [None if e.strip() == "..." else _line_pattern(e) for e in expected]
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(pats):
            ok = j == len(act)
        elif pats[i] is None:
            ok = any(go(i + 1, jj) for jj in range(j, len(act) + 1))
        else:
            pat = pats[i]
            ok = j < len(act) and pat is not None and bool(pat.match(act[j])) and go(i + 1, j + 1)
        memo[key] = ok
        return ok

    return go(0, 0)


class Shell:
    """One page's working directory and the state its commands share."""

    def __init__(self, cwd: Path, room: Path | None = None) -> None:
        self.cwd = cwd
        self.room = room
        self.status = 0
        self.pending: str | None = None  # a failed command that no `echo $?` looked at yet
        # the user's own ledger index and fresh-sample registry are neither read nor written by
        # a page's commands (transcripts made from a shell once wrote ~/.local/share/assay)
        self.state = {
            "ASSAY_LEDGER_INDEX": str(cwd / ".state" / "ledgers.jsonl"),
            "ASSAY_FRESH_REGISTRY": str(cwd / ".state" / "fresh.sqlite"),
        }

    def run(self, command: str) -> tuple[int, str]:
        words = shlex.split(command, comments=True)
        if not words:
            return 0, ""
        if words == ["echo", "$?"]:
            self.pending = None
            return 0, f"{self.status}\n"
        if self.pending is not None:
            raise AssertionError(f"`{self.pending}` exited {self.status} and no `echo $?` shows it")
        if words[0] == "cd" and len(words) == 2:
            self.cwd = (self.cwd / words[1]).resolve()
            return self._done(command, 0, "")
        if words[0] == "cat" and len(words) == 2 and not _shell_syntax(command):
            return self._done(command, 0, (self.cwd / words[1]).read_text(encoding="utf-8"))
        if words[0] == "head" and len(words) == 3 and re.fullmatch(r"-\d+", words[1]):
            text = (self.cwd / words[2]).read_text(encoding="utf-8")
            kept = text.split("\n")[: int(words[1][1:])]
            return self._done(command, 0, "\n".join(kept) + "\n")
        if words[0] == "assay" and not _shell_syntax(command):
            return self._done(command, *self._assay(words[1:]))
        return self._done(command, *self._bash(command))

    def _done(self, command: str, code: int, output: str) -> tuple[int, str]:
        self.status = code
        self.pending = command if code else None
        return code, output

    def _assay(self, args: list[str]) -> tuple[int, str]:
        from typer.testing import CliRunner

        import assay.cli._register  # noqa: F401
        from assay.cli import app

        old = Path.cwd()
        os.chdir(self.cwd)
        try:
            # a user's own request cache would serve what the page shows as called
            env = {"COLUMNS": "200", "NO_COLOR": "1", "ASSAY_CACHE_DIR": None, **self.state}
            res = CliRunner().invoke(app, args, env=env)
        finally:
            os.chdir(old)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise AssertionError(f"assay {' '.join(args)} raised {res.exception!r}\n{res.output}")
        return res.exit_code, res.output

    def _bash(self, command: str) -> tuple[int, str]:
        bindir = Path(tempfile.mkdtemp(prefix="docs-bin-"))
        shim = bindir / "assay"
        shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m assay.cli "$@"\n')
        shim.chmod(0o755)
        env = dict(os.environ)
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        env["COLUMNS"] = "200"
        env.pop("ASSAY_CACHE_DIR", None)
        env.update(self.state)
        try:
            res = subprocess.run(
                ["bash", "-c", command],
                cwd=self.cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=120,
            )
        finally:
            shutil.rmtree(bindir, ignore_errors=True)
        return res.returncode, res.stdout


def _shell_syntax(command: str) -> bool:
    return bool(re.search(r"[|><;&`]|\$\(", command.split(" #")[0]))


def build_small_room(where: Path) -> str:
    """Build the small room with `SMALL_ROOM` in ``where``; returns what it printed."""
    shell = Shell(where)
    code, output = shell.run(SMALL_ROOM)
    if code:
        raise AssertionError(f"{SMALL_ROOM} exited {code}:\n{output}")
    return output


def run_block(block: Block, shell: Shell, room_output: str | None = None) -> list[str]:
    """Run a block's commands in ``shell``; the problems found (empty: it holds)."""
    problems: list[str] = []
    for i, step in enumerate(steps(block)):
        if block.fixture and i == 0:
            if step.command != SMALL_ROOM or shell.room is None or room_output is None:
                return [f"{block.where}: the fixture block must start with `$ {SMALL_ROOM}`"]
            shutil.copytree(shell.room, shell.cwd / "out" / "small", symlinks=True)
            code, output = 0, room_output
            shell.status = 0
        else:
            try:
                code, output = shell.run(step.command)
            except AssertionError as exc:
                return [f"{block.where}: {exc}"]
        if block.lang != "console":
            if code:
                problems.append(f"{block.where}: `{step.command}` exited {code}:\n{output}")
            continue
        if step.expected and not matches(step.expected, output.split("\n")):
            problems.append(
                f"{block.where}: `{step.command}` printed\n{output}\n-- where the page shows --\n"
                + "\n".join(step.expected)
            )
    if shell.pending is not None:
        problems.append(
            f"{block.where}: `{shell.pending}` exited {shell.status} and no `echo $?` shows it"
        )
        shell.pending = None
    return problems


# -- for cog ------------------------------------------------------------------------------------

_ROOM: Path | None = None


def small_room() -> Path:
    """The small room, built once per process (the docs test passes its own with cog's
    ``-D docs_room=PATH``)."""
    global _ROOM
    if _ROOM is None:
        where = Path(tempfile.mkdtemp(prefix="docs-room-"))
        build_small_room(where)
        _ROOM = where / "out" / "small"
    return _ROOM


@contextlib.contextmanager
def _scratch(room: Path | None) -> Iterator[Shell]:
    work = Path(tempfile.mkdtemp(prefix="docs-cog-"))
    try:
        if room is not None:
            shutil.copytree(room, work / "out" / "small", symlinks=True)
        yield Shell(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def transcript(commands: list[str], *, room: str | None = None, lang: str = "console") -> str:
    """A fenced console block: each command run in a fresh copy of the small room (in
    ``out/small``; ``room`` is its path, else it is built), then what it printed."""
    base = Path(room) if room else small_room()
    out = [f"```{lang}"]
    with _scratch(base) as shell:
        shell.cwd = shell.cwd / "out" / "small"
        for cmd in commands:
            _, output = shell.run(cmd)
            output = _stable(output, shell.cwd)
            out.append(f"$ {cmd}")
            out.extend(line.rstrip() for line in output.rstrip("\n").split("\n") if output)
    if shell.pending is not None:
        raise AssertionError(f"`{shell.pending}` exited {shell.status}: add `echo $?` after it")
    out.append("```")
    return "\n".join(out)


def _stable(output: str, room: Path) -> str:
    """``output`` with each run's hash replaced by ``<hash of runs/NAME>``: a run's rows record
    the system's latency, so its hash differs from one build of the room to the next."""
    import json

    for meta in sorted((room / "runs").glob("*.meta.json")):
        h = json.loads(meta.read_text(encoding="utf-8")).get("run_hash")
        if h:
            name = meta.name.removesuffix(".meta.json")
            output = output.replace(str(h), f"<hash of runs/{name}>")
    return output


def command_list() -> str:
    """Every `assay` command with the first line of its help, as a Markdown table."""
    import typer.main

    import assay.cli._register  # noqa: F401
    from assay.cli import app

    rows = ["| command | what it does |", "| --- | --- |"]

    def walk(cmd: object, prefix: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is None:
            first = (getattr(cmd, "help", "") or "").strip().split("\n")[0]
            cell = first.replace("|", "\\|")
            rows.append(f"| `assay {' '.join(prefix)}` | {cell} |")
            return
        for name, sub in sorted(subs.items()):
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return "\n".join(rows)


def help_text(command: str) -> str:
    """``assay COMMAND --help`` as a console block (100 columns, no colour)."""
    from typer.testing import CliRunner

    import assay.cli._register  # noqa: F401
    from assay.cli import app

    res = CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "100"})
    body = "\n".join(line.rstrip() for line in res.output.rstrip("\n").split("\n"))
    shown = " ".join(["assay", *command.split(), "--help"])
    return f"```console\n$ {shown}\n{body}\n```"


def comparison_key() -> str:
    """What the ledger's comparison key is made of: `assay.compare.comparison_key`'s parameters
    and its docstring, as Markdown."""
    import inspect

    from assay.compare import comparison_key as key

    names = ", ".join(f"`{n}`" for n in inspect.signature(key).parameters)
    doc = " ".join((inspect.getdoc(key) or "").split())
    return f"- the key's fields: {names}\n- {doc}"


# -- the worked example of docs/statistics.md ---------------------------------------------------

STATISTICS_CASE = {
    # category -> [(pieces of 2 the baseline found, pieces the candidate found)], entry by entry
    "comparison": [(2, 2)] * 30 + [(2, 1)] * 8 + [(1, 2)] + [(1, 1)] * 8 + [(0, 0)] * 3,
    "lookup": [(2, 2)] * 48 + [(1, 2)] * 12 + [(2, 1)] + [(0, 1)] * 3 + [(1, 1)] * 6,
    "trend": [(2, 2)] * 3 + [(1, 1)],
}
"""The chunker change of docs/statistics.md: 124 entries of two required pieces each, the
candidate better on lookups, worse on comparisons."""


def statistics_case(where: Path) -> None:
    """Write ``golden.jsonl``, ``base.jsonl`` and ``cand.jsonl`` of `STATISTICS_CASE` in
    ``where``: each entry needs pieces ``<id>-a`` and ``<id>-b``; a run retrieves the pieces it
    found first, then chunks that hold nothing."""
    import json

    from assay.runs import write_run

    entries = []
    runs: tuple[list[dict[str, object]], list[dict[str, object]]] = ([], [])
    for cat, pairs in STATISTICS_CASE.items():
        for i, pair in enumerate(pairs):
            eid = f"{cat}-{i:03d}"
            entries.append(
                {
                    "id": eid,
                    "query": f"question {eid}",
                    "category": cat,
                    "evidence_paths": [[[f"{eid}-a"], [f"{eid}-b"]]],
                    "metadata": {"fact_id": f"fact-{i // 3}"},
                }
            )
            for which, rows in enumerate(runs):
                found = [f"{eid}-a", f"{eid}-b"][: pair[which]]
                fill = [f"noise-{j}" for j in range(6 - len(found))]
                rows.append({"id": eid, "retrieved": found + fill})
    where.mkdir(parents=True, exist_ok=True)
    (where / "golden.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8"
    )
    write_run(where / "base.jsonl", runs[0])
    write_run(where / "cand.jsonl", runs[1])


class Transcripts:
    """Console blocks whose commands share one working directory, set up by ``setup``."""

    def __init__(self, setup: Callable[[Path], None]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="docs-cog-"))
        atexit.register(shutil.rmtree, self.dir, True)
        setup(self.dir)
        self.shell = Shell(self.dir)

    def block(self, commands: list[str]) -> str:
        out = ["```console"]
        for cmd in commands:
            _, output = self.shell.run(cmd)
            out.append(f"$ {cmd}")
            out.extend(line.rstrip() for line in output.rstrip("\n").split("\n") if output)
        if self.shell.pending is not None:
            raise AssertionError(f"`{self.shell.pending}` exited {self.shell.status}: add echo $?")
        out.append("```")
        return "\n".join(out)
