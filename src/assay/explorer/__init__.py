"""assay.explorer: the results bundle and the offline explorer site rendered from it.

`export_bundle` / `build_bundle` gather scores with intervals, comparisons with flips,
attribution, the ablation ladder and one row per entry into one JSON file; `render_site` turns a
bundle into static HTML pages that open from ``file://`` with no server and no network request,
the same bundle giving the same bytes.
"""

from assay.explorer.bundle import (
    SCHEMA,
    Bundle,
    build_bundle,
    bundle_entries,
    export_bundle,
    load_bundle,
)
from assay.explorer.site import (
    MARKER,
    STAGES,
    SiteResult,
    conversation_filenames,
    entry_filenames,
    render_site,
    report_site,
)

__all__ = [
    "MARKER",
    "SCHEMA",
    "STAGES",
    "Bundle",
    "SiteResult",
    "build_bundle",
    "bundle_entries",
    "conversation_filenames",
    "entry_filenames",
    "export_bundle",
    "load_bundle",
    "render_site",
    "report_site",
]
