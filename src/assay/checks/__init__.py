"""assay's own answer checks, one module per check group: `answer` (prose answers), `policy`
(access boundaries), `sql` (gold SQL queries) and `tools` (an agent's tool calls).

Nothing imports these modules by hand: the check registry finds every public module of this
package with `pkgutil`, as the metric families are found, and imports it on its first read,
before the plug-ins of the ``assay.checks`` entry-point group
(`assay.judge.registry.load_plugins`). A new group of built-in checks is a new module here.
"""
