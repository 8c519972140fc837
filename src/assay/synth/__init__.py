"""assay.synth"""
