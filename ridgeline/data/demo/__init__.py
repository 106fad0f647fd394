"""Inputs of `ridgeline demo`.

SYNTHETIC ridgeline fixture (not a real capture), written by fixtures/generate.py; regenerate with: python fixtures/generate.py
"""
