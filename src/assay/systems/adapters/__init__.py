"""The built-in system adapters. Importing this package registers them, in the order `assay run
--help` shows them. Each module declares one adapter: its spec, its options and its builder.

To add one, write a module like `bm25.py` (an `Adapter` with its `Option`s, passed to
`register_adapter`), import it here, and add a test.
"""

from assay.systems.adapters import bm25, filings, http, python, sql

__all__ = ["bm25", "filings", "http", "python", "sql"]
