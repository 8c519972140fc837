"""assay.benchmarks: evaluation harnesses on public data, kept apart from the systems they measure.

Each benchmark is a subpackage that calls the library (`assay.runner`, `assay.score`,
`assay.compare`, `assay.judge`) rather than re-implementing scoring or statistics:

    financebench   import of FinanceBench questions, the retrieval ladder, the judge bench
"""
