"""assay.corpus: the documents a system retrieves from, and their chunks.

filings --parse--> `Document` --chunk--> `Chunk` rows of a `ChunkTable`, each with the access
label of its document.

Main entry points:

- `build_corpus(source, out)` -> `CorpusManifest` (``assay corpus build``): parse every file
  (`parse_file`: PDF, HTML, text; `read_file` / `read_bytes` for office files and scans), chunk
  (`chunk_document` with `ChunkSettings`) and write the chunk table (`write_chunks`);
- `load_chunks(path)` -> `ChunkTable`; `load_documents` / `load_documents_any` -> `Document`
  (FinanceBench records too: `from_financebench`); `load_pages` -> `PageTexts`;
- access labels: `parse_access` -> `AccessLabel`, `allows(label, principal, as_of)`,
  `decision` (see, refuse or escalate);
- financial statement facts: `extract_facts` -> `Fact`, `search_facts`;
- ``ocr``: the optional OCR engines, a namespace (``ocr.available()``, ``ocr.ocr_engine()``).

Everything is imported lazily, on first use. Import from here, not from the modules: other
packages of assay do (tests/test_package_faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._faces import lazy_face

if TYPE_CHECKING:
    from assay.corpus import ocr
    from assay.corpus.access import (
        PUBLIC,
        TIERS,
        AccessLabel,
        PrincipalLike,
        allows,
        decision,
        parse_access,
        principal_json,
        principal_key,
        tier_rank,
    )
    from assay.corpus.build import MANIFEST_FORMAT, CorpusManifest, build_corpus, load_manifest
    from assay.corpus.chunking import (
        CHUNKER_NAME,
        ChunkSettings,
        TextChunk,
        chunk_document,
        chunk_page,
        find_unit,
        is_table_row,
        numeric_tail,
    )
    from assay.corpus.chunks import (
        Chunk,
        ChunkTable,
        chunk_content_hash,
        content_chunk_id,
        load_chunks,
        normal_chunk_id,
        table_fingerprint,
        write_chunks,
    )
    from assay.corpus.documents import (
        FINANCEBENCH_COMPANIES,
        FORMS,
        CompanyInfo,
        Document,
        detect_amendment,
        enrich_from_text,
        from_financebench,
        is_financebench_record,
        link_amendments,
        load_documents,
        load_documents_any,
        parse_date_phrase,
    )
    from assay.corpus.facts import (
        STATEMENT_TITLES,
        Fact,
        detect_statement,
        extract_facts,
        parse_table,
        split_joined_rows,
    )
    from assay.corpus.factsearch import FactsSearch, load_facts, search_facts
    from assay.corpus.fiscal import FiscalCalendar, Naming, shift_months
    from assay.corpus.ocr import OcrFn
    from assay.corpus.office import (
        OfficeLimits,
        Region,
        cell_text,
        col_letter,
        parse_docx_bytes,
        parse_xlsx_bytes,
    )
    from assay.corpus.pages import PageTexts, load_pages
    from assay.corpus.parse import (
        PARSER_NAME,
        SUPPORTED_SUFFIXES,
        parse_file,
        parse_html,
        parse_pdf,
        parse_text,
        parser_version,
    )
    from assay.corpus.readers import (
        READ_SUFFIXES,
        READER_REVISION,
        Box,
        ParsedFile,
        chunk_parsed,
        read_bytes,
        read_file,
    )

__all__ = [
    "CHUNKER_NAME",
    "FINANCEBENCH_COMPANIES",
    "FORMS",
    "MANIFEST_FORMAT",
    "PARSER_NAME",
    "PUBLIC",
    "READER_REVISION",
    "READ_SUFFIXES",
    "STATEMENT_TITLES",
    "SUPPORTED_SUFFIXES",
    "TIERS",
    "AccessLabel",
    "Box",
    "Chunk",
    "ChunkSettings",
    "ChunkTable",
    "CompanyInfo",
    "CorpusManifest",
    "Document",
    "Fact",
    "FactsSearch",
    "FiscalCalendar",
    "Naming",
    "OcrFn",
    "OfficeLimits",
    "PageTexts",
    "ParsedFile",
    "PrincipalLike",
    "Region",
    "TextChunk",
    "allows",
    "build_corpus",
    "cell_text",
    "chunk_content_hash",
    "chunk_document",
    "chunk_page",
    "chunk_parsed",
    "col_letter",
    "content_chunk_id",
    "decision",
    "detect_amendment",
    "detect_statement",
    "enrich_from_text",
    "extract_facts",
    "find_unit",
    "from_financebench",
    "is_financebench_record",
    "is_table_row",
    "link_amendments",
    "load_chunks",
    "load_documents",
    "load_documents_any",
    "load_facts",
    "load_manifest",
    "load_pages",
    "normal_chunk_id",
    "numeric_tail",
    "ocr",
    "parse_access",
    "parse_date_phrase",
    "parse_docx_bytes",
    "parse_file",
    "parse_html",
    "parse_pdf",
    "parse_table",
    "parse_text",
    "parse_xlsx_bytes",
    "parser_version",
    "principal_json",
    "principal_key",
    "read_bytes",
    "read_file",
    "search_facts",
    "shift_months",
    "split_joined_rows",
    "table_fingerprint",
    "tier_rank",
    "write_chunks",
]

#: name -> the module that defines it (read on first access: nothing is imported up front)
_LAZY: dict[str, str] = {
    "AccessLabel": "assay.corpus.access",
    "PUBLIC": "assay.corpus.access",
    "PrincipalLike": "assay.corpus.access",
    "TIERS": "assay.corpus.access",
    "allows": "assay.corpus.access",
    "decision": "assay.corpus.access",
    "parse_access": "assay.corpus.access",
    "principal_json": "assay.corpus.access",
    "principal_key": "assay.corpus.access",
    "tier_rank": "assay.corpus.access",
    "CorpusManifest": "assay.corpus.build",
    "MANIFEST_FORMAT": "assay.corpus.build",
    "build_corpus": "assay.corpus.build",
    "load_manifest": "assay.corpus.build",
    "CHUNKER_NAME": "assay.corpus.chunking",
    "ChunkSettings": "assay.corpus.chunking",
    "TextChunk": "assay.corpus.chunking",
    "chunk_document": "assay.corpus.chunking",
    "chunk_page": "assay.corpus.chunking",
    "find_unit": "assay.corpus.chunking",
    "is_table_row": "assay.corpus.chunking",
    "numeric_tail": "assay.corpus.chunking",
    "Chunk": "assay.corpus.chunks",
    "ChunkTable": "assay.corpus.chunks",
    "chunk_content_hash": "assay.corpus.chunks",
    "content_chunk_id": "assay.corpus.chunks",
    "load_chunks": "assay.corpus.chunks",
    "normal_chunk_id": "assay.corpus.chunks",
    "table_fingerprint": "assay.corpus.chunks",
    "write_chunks": "assay.corpus.chunks",
    "CompanyInfo": "assay.corpus.documents",
    "Document": "assay.corpus.documents",
    "FINANCEBENCH_COMPANIES": "assay.corpus.documents",
    "FORMS": "assay.corpus.documents",
    "detect_amendment": "assay.corpus.documents",
    "enrich_from_text": "assay.corpus.documents",
    "from_financebench": "assay.corpus.documents",
    "is_financebench_record": "assay.corpus.documents",
    "link_amendments": "assay.corpus.documents",
    "load_documents": "assay.corpus.documents",
    "load_documents_any": "assay.corpus.documents",
    "parse_date_phrase": "assay.corpus.documents",
    "Fact": "assay.corpus.facts",
    "STATEMENT_TITLES": "assay.corpus.facts",
    "detect_statement": "assay.corpus.facts",
    "extract_facts": "assay.corpus.facts",
    "parse_table": "assay.corpus.facts",
    "split_joined_rows": "assay.corpus.facts",
    "FactsSearch": "assay.corpus.factsearch",
    "load_facts": "assay.corpus.factsearch",
    "search_facts": "assay.corpus.factsearch",
    "FiscalCalendar": "assay.corpus.fiscal",
    "Naming": "assay.corpus.fiscal",
    "shift_months": "assay.corpus.fiscal",
    "OcrFn": "assay.corpus.ocr",
    "OfficeLimits": "assay.corpus.office",
    "Region": "assay.corpus.office",
    "cell_text": "assay.corpus.office",
    "col_letter": "assay.corpus.office",
    "parse_docx_bytes": "assay.corpus.office",
    "parse_xlsx_bytes": "assay.corpus.office",
    "PageTexts": "assay.corpus.pages",
    "load_pages": "assay.corpus.pages",
    "PARSER_NAME": "assay.corpus.parse",
    "SUPPORTED_SUFFIXES": "assay.corpus.parse",
    "parse_file": "assay.corpus.parse",
    "parse_html": "assay.corpus.parse",
    "parse_pdf": "assay.corpus.parse",
    "parse_text": "assay.corpus.parse",
    "parser_version": "assay.corpus.parse",
    "Box": "assay.corpus.readers",
    "ParsedFile": "assay.corpus.readers",
    "READER_REVISION": "assay.corpus.readers",
    "READ_SUFFIXES": "assay.corpus.readers",
    "chunk_parsed": "assay.corpus.readers",
    "read_bytes": "assay.corpus.readers",
    "read_file": "assay.corpus.readers",
}
#: namespaces of verbs: the submodule itself
_NAMESPACES: dict[str, str] = {"ocr": "assay.corpus.ocr"}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(__name__, _LAZY, _NAMESPACES)
