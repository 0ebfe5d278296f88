"""Pure rendering of a stored report: the SVG sequence diagram and Plotly figure dicts.

Everything here works from the report dict `build_report` returns (what the web
stores per trace), never from a `Trace`, so pages render without re-running the core.
"""

from __future__ import annotations

from .charts import (
    cost_figure,
    figures,
    resend_by_tool_figure,
    resend_results_figure,
    timeline_figure,
    transcript_growth_figure,
)
from .sequence import (
    SequenceWindow,
    UnknownLoop,
    render_overview,
    render_sequence,
    sequence_view,
    sequence_window,
)

__all__ = [
    "SequenceWindow",
    "UnknownLoop",
    "cost_figure",
    "figures",
    "render_overview",
    "render_sequence",
    "resend_by_tool_figure",
    "resend_results_figure",
    "sequence_view",
    "sequence_window",
    "timeline_figure",
    "transcript_growth_figure",
]
