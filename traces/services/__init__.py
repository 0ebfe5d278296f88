"""Writes with rules: ingest, sets, deletion, labels, mappings, team, background jobs."""
