"""assay.corpus"""
