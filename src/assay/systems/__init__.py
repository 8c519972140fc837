"""assay.systems"""
