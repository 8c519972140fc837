"""Systems under test: the contract, the adapters that build them, and their identity.

- `protocol`: the `System` contract (``retrieve``, optional ``answer``, ``identity``,
  ``corpus_hash``) and `SystemCallError`; read its module docs for the full contract;
- `registry`: `Adapter`, `Option`, `register_adapter`, `list_adapters`, `load_system`;
- `adapters`: the built-in adapters (import path, HTTP, bm25, filings), registered on import;
- `identity`: `system_identity` (spec, arguments, declared identity or source hash);
- `bm25` (`BM25System`) and `filings` (the reference pipeline) are systems in their own right.
"""

from assay.systems import adapters  # importing it registers the built-in adapters
from assay.systems.adapters.http import HttpSystem
from assay.systems.identity import (
    chunk_table_of,
    corpus_hash_of,
    data_files_of,
    data_hash,
    identity_hash,
    identity_parts,
    package_hash,
    source_hash,
    system_identity,
    table_record,
)
from assay.systems.protocol import AnsweringSystem, System, SystemCallError, check_protocol
from assay.systems.registry import (
    Adapter,
    Option,
    find_adapter,
    list_adapters,
    load_system,
    register_adapter,
)

__all__ = [
    "Adapter",
    "AnsweringSystem",
    "HttpSystem",
    "Option",
    "System",
    "SystemCallError",
    "adapters",
    "check_protocol",
    "chunk_table_of",
    "corpus_hash_of",
    "data_files_of",
    "data_hash",
    "find_adapter",
    "identity_hash",
    "identity_parts",
    "list_adapters",
    "load_system",
    "package_hash",
    "register_adapter",
    "source_hash",
    "system_identity",
    "table_record",
]
