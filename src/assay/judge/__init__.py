"""assay.judge"""
