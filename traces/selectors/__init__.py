"""Reads: stored traces, sets and comparisons rebuilt into what pages and the API show."""
