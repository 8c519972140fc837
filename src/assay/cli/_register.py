"""Imports every command module so that each registers its commands on `assay.cli.app`."""

from assay.cli import (  # noqa: F401
    agreement_cmds,
    bench_cmds,
    cache_cmds,
    core_cmds,
    corpus_cmds,
    demo_cmds,
    groups,
    judge_cmds,
    stats_cmds,
    synth_cmds,
    workbench_cmds,
)
