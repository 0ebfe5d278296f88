"""The JSON API for scripts and agents: traces, sets and background jobs."""
