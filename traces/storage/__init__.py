"""Where a trace's bytes and rows are kept: originals, rows, the report cache, connection scopes."""
