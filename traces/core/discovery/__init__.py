"""Discovery: the agents' session stores under a home, and the sessions they hold (pure).

`stores.STORES` says where each agent we read keeps its sessions; `find.scan` and
`find.find_sessions` list them; `hints.session_hints` names a session's agent, id and
project when its reader does not. The watcher (`traces.live.watch`) and the "On this
machine" page read through these.
"""

from .find import Candidate, StoreScan, default_home, find_sessions, scan, session_files
from .hints import HEAD_BYTES, session_hints
from .stores import STORES, Store, store_named

__all__ = (
    "HEAD_BYTES",
    "STORES",
    "Candidate",
    "Store",
    "StoreScan",
    "default_home",
    "find_sessions",
    "scan",
    "session_files",
    "session_hints",
    "store_named",
)
