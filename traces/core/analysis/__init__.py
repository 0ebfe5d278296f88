"""Stage 2, analysis: exchanges in, a `Trace` and its numbers out.

`ingest` drives reading and rebuilds the loops (`rebuild`: calls grouped into loops, tool
calls paired with their results); `accounting`, `tokens` and `pricing` count and price
every token; `rules/` lint the loops and `whatif/` replays them under other settings.
Analysis may import reading and the shared base, never `outputs`.
"""
