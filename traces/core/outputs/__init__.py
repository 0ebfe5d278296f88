"""Stage 3, outputs: a `Trace` in, what people read out.

`report` builds the report (`loop-inspector/report/v1`, typed in `traces.core.report_types`)
that the web shows; summaries, the post-mortem, exports (HTML, Markdown, SARIF),
comparisons and the drawings (`render/`) are made from it. Outputs may import every stage.
"""
