"""assay's own answer checks, one module per check group: `answer` (prose answers),
`conversation` (turns read with the turns before them), `policy` (access boundaries), `routing`
(labels), `sql` (gold SQL queries) and `tools` (an agent's tool calls). A group too big for one
module is a package of modules, one per concern, that its ``__init__`` imports.

Nothing imports these modules by hand: assay's ``pyproject.toml`` declares each one in the
``assay.checks`` entry-point group, where plug-ins declare theirs, and the check registry loads
them all on its first read, assay's own first (`assay.judge.registry.load_plugins`). Without
assay's installed metadata (run from its sources) it imports every public module of this package,
found with `pkgutil`. A new group of built-in checks is a new module here and a line in
``pyproject.toml`` (a test checks the two agree).
"""
