"""assay.dataset"""
