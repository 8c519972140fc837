"""assay.workbench"""
