"""Stage 1, reading: bytes in, `Exchange`s out.

An upload is unwrapped (gzip, ZIP, YAML cassettes, JSON documents, JSONL) into numbered
records (`sources`, `records`), a format adapter is chosen and turns the records into
exchanges (`formats/`, each vendor's message shapes in `dialects/`). Nothing here knows
about loops, costs or reports: reading imports only the shared base (`traces.core.model`
and friends), never `analysis` or `outputs`.
"""
