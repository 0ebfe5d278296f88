#!/usr/bin/env python
"""Django's command-line utility for Loop Inspector."""

import os
import sys

from inspector.cli import CORE_COMMANDS


def main() -> None:
    """The core commands (CORE_COMMANDS) skip Django's set-up, except `lint --set NAME`,
    which reads a stored run set from the database."""
    stored_set = any(arg == "--set" or arg.startswith("--set=") for arg in sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] in CORE_COMMANDS and not stored_set:
        from inspector.cli import main as core_command

        sys.exit(core_command(sys.argv[1:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
