"""The ladder's tests use the tiny handmade filings corpus of the pipeline's tests (two companies,
calendars ending in June and December): the fixture is shared, not copied."""

from tests.systems.filings.conftest import corpus_dir, write_corpus

__all__ = ["corpus_dir", "write_corpus"]
