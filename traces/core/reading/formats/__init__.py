"""Trace formats: one module per format, each registering one streaming adapter.

Every module in this package is imported on first use of the registry, so adding a
format is adding a module.
"""
