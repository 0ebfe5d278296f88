"""Watch tests share the live tests' settling of report refreshes."""

from tests.live.conftest import settled_live_state  # noqa: F401  (an autouse fixture)
