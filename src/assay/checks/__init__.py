"""assay's own answer checks, one module per check group (`answer`, `conversation`, `policy`,
`routing`, `sql`, `tools`); a group too big for one module is a package, a module per concern.

Nothing imports these modules by hand: assay's ``pyproject.toml`` declares each one in the
``assay.checks`` entry-point group, where plug-ins declare theirs, and the check registry loads
them all on its first read, assay's own first (`assay.judge.registry.load_plugins`). Without
assay's installed metadata (run from its sources) it imports every public module of this package,
found with `pkgutil`. A new group of built-in checks is a new module here and a line in
``pyproject.toml`` (a test checks the two agree).
"""
