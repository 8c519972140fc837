"""Every command keeps the option names it has (`option_names.json`): moving shared options into
one module or from one Typer style to the other must not rename, drop or add an option. A change
that means to (a new option) regenerates the file and shows the difference in review:
``PYTHONPATH=src python -m tests.cli.test_option_names``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

import assay.cli._register  # noqa: F401  (registers every command)
from assay.cli import app

SNAPSHOT = Path(__file__).with_name("option_names.json")


def _leaves(cmd: Any, prefix: list[str]) -> Iterator[tuple[str, Any]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        yield " ".join(prefix), cmd
        return
    for name, sub in sorted(subs.items()):
        yield from _leaves(sub, [*prefix, name])


def option_names() -> dict[str, list[str]]:
    """Each command's option names (every spelling, hidden ones too), sorted."""
    return {
        name: sorted(
            o
            for p in cmd.params
            if getattr(p, "param_type_name", "") == "option"
            for o in (*p.opts, *p.secondary_opts)
        )
        for name, cmd in _leaves(typer.main.get_command(app), [])
    }


def test_every_command_keeps_its_option_names() -> None:
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = option_names()
    assert sorted(got) == sorted(want), "commands added or removed"
    changed = {
        c: {"lost": sorted(set(want[c]) - set(got[c])), "new": sorted(set(got[c]) - set(want[c]))}
        for c in want
        if got[c] != want[c]
    }
    assert changed == {}


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(option_names(), indent=1, sort_keys=True) + "\n", "utf-8")


SHARED = ("--format", "--level", "--skip-missing", "--allow-corpus-change", "--tiers",
          "--allow-changed-entries", "--allow-reuse", "--cluster")  # fmt: skip
OTHER_MEANING = {
    ("bench financebench-retrieval", "--level"): "the scoring levels to run, not the gold level",
}


def test_a_shared_option_has_one_help_text() -> None:
    """Each shared option (`assay.cli.options`) reads the same in every command's --help."""
    helps: dict[str, dict[str, list[str]]] = {o: {} for o in SHARED}
    for name, cmd in _leaves(typer.main.get_command(app), []):
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.opts[0] not in helps:
                continue
            if (name, p.opts[0]) not in OTHER_MEANING:
                helps[p.opts[0]].setdefault(p.help or "", []).append(name)
    assert {o: len(h) for o, h in helps.items()} == dict.fromkeys(SHARED, 1), helps


def test_one_typer_style() -> None:
    """Every parameter is declared ``Annotated[type, typer.Option(...)] = default``: no
    `typer.Option` or `typer.Argument` as a default value or a module-level constant."""
    import ast

    import assay.cli

    found = []
    for path in sorted(Path(assay.cli.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        values: list[ast.expr] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.arguments):
                values += [d for d in (*node.defaults, *node.kw_defaults) if d is not None]
        values += [n.value for n in tree.body if isinstance(n, ast.Assign)]
        for v in values:
            if (
                isinstance(v, ast.Call)
                and isinstance(v.func, ast.Attribute)
                and isinstance(v.func.value, ast.Name)
                and v.func.value.id == "typer"
                and v.func.attr in ("Option", "Argument")
            ):
                found.append(f"{path.name}:{v.lineno}")
    assert found == []


def test_the_golden_dataset_argument_reads_the_same_everywhere() -> None:
    commands = dict(_leaves(typer.main.get_command(app), []))
    takes = ["attribute", "run", "score", "sql run", "sweep", "check", "judge run", "sql check",
             "compare", "export", "gate", "audit labels", "audit leakage", "audit seasonal"]  # fmt: skip
    helps = {
        getattr(commands[c].params[0], "help", None) for c in takes
    }  # the dataset is each one's first argument
    assert helps == {"Golden dataset (JSONL of entries)."}


def _shared() -> dict[str, Any]:
    """The shared options of `assay.cli.options`: alias name -> its `typer.Option`."""
    from typing import get_args

    import typer.models

    import assay.cli.options as options

    out = {}
    for name in dir(options):
        meta = get_args(getattr(options, name))[1:]
        infos = [m for m in meta if isinstance(m, typer.models.OptionInfo)]
        if infos:
            out[name] = infos[0]
    return out


# an option spelt like a shared one that means something else in that command
OWN_MEANING = {
    ("run", "--k"): "hits to ask the system for, not a metric cutoff",
    ("sql run", "--k"): "hits to ask the system for, not a metric cutoff",
    ("sql suite", "--k"): "the number of database variants",
    ("judge run", "-k"): "retrieved chunks shown to the judge",
    ("bench financebench-retrieval", "--level"): "the scoring levels to run, not the gold level",
}


# shared options that mean one thing wherever they appear (``--seed`` and ``--chunks`` say in
# each command what they seed or what the table is for)
ONE_MEANING = (*SHARED, "--k", "-k", "--resamples", "--confidence")


def test_a_command_never_defines_its_own_variant_of_a_shared_option() -> None:
    """An option spelt like a shared one of one meaning (`assay.cli.options`: ``--k``,
    ``--resamples``, ``--confidence``, ``--format``, ...) is that option in every command: the
    same spellings, help text and bounds (a command that declares its own ``--resamples`` with
    another minimum, or its own ``--k`` help, fails here)."""

    def bound(v: object) -> object:
        return None if v is None else float(v)  # type: ignore[arg-type]

    def decls(o: Any) -> list[str]:  # in ``Annotated``, typer reads a first "--name" as one
        first = [o.default] if isinstance(o.default, str) and o.default.startswith("-") else []
        return sorted([*first, *o.param_decls])

    shared = {n: (decls(o), o.help, bound(o.min), bound(o.max)) for n, o in _shared().items()}
    spelt: dict[str, set[str]] = {}
    for n, (decls, *_) in shared.items():
        for d in decls:
            if d in ONE_MEANING:
                spelt.setdefault(d, set()).add(n)
    variants = []
    commands = dict(_leaves(typer.main.get_command(app), []))
    for name, o in OWN_MEANING:  # no stale exception
        assert any(o in (*p.opts, *p.secondary_opts) for p in commands[name].params), (name, o)
    for name, cmd in commands.items():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option":
                continue
            opts = [*p.opts, *p.secondary_opts]
            like = {n for o in opts for n in spelt.get(o, ())}
            if not like or any((name, o) in OWN_MEANING for o in opts):
                continue
            got = (sorted(opts), p.help, bound(getattr(p, "min", None)),
                   bound(getattr(p, "max", None)))  # fmt: skip
            if not any(got == shared[n] for n in like):
                variants.append(f"{name} {opts[0]}: {got} is not {sorted(like)}")
    assert variants == []
