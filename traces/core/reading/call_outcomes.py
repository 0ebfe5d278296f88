"""How a recorded call that did not complete ended: the names the capture line, the rules
and the call page share.

Apart from `capture` (which writes them, and imports the credential masking and HTTP
body readers for it) so that the lint rules that read them import a few strings only.
"""

from __future__ import annotations

from types import MappingProxyType

OUTCOME_KEY = "call_outcome"
"""The line's key saying how a call that did not complete ended (`CapturedExchange.outcome`)."""
CLIENT_LEFT = "client-left"
"""The client hung up before the answer ended (the upstream was still answering)."""
UPSTREAM_BROKE_OFF = "upstream-broke-off"
"""The upstream's connection (or socket) ended mid-answer."""
TIMEOUT = "timeout"
"""The upstream did not answer, or sent nothing, within the proxy's timeout."""
UPSTREAM_UNREACHABLE = "upstream-unreachable"
"""The upstream could not be reached (or the request could not be sent on)."""
API_ERROR = "api-error"
"""The upstream answered, with an error status."""
CALL_OUTCOMES = (CLIENT_LEFT, UPSTREAM_BROKE_OFF, TIMEOUT, UPSTREAM_UNREACHABLE, API_ERROR)
OUTCOME_LABELS = MappingProxyType(
    {
        CLIENT_LEFT: "the client left",
        UPSTREAM_BROKE_OFF: "the upstream broke off",
        TIMEOUT: "timed out",
        UPSTREAM_UNREACHABLE: "upstream unreachable",
        API_ERROR: "API error",
    }
)
"""How the call page names each outcome."""
NOT_THE_API = frozenset({CLIENT_LEFT, UPSTREAM_BROKE_OFF, TIMEOUT, UPSTREAM_UNREACHABLE})
"""Outcomes that are no answer of the API: no `api-error` finding for them."""
