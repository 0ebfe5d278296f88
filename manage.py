#!/usr/bin/env python
"""Django's command-line utility for Loop Inspector."""

import os
import sys

CORE_COMMANDS = {"analyze", "lint", "report"}
"""Commands that run the pure core: they skip Django's set-up (see inspector/cli.py)."""


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in CORE_COMMANDS:
        from inspector.cli import main as core_command

        sys.exit(core_command(sys.argv[1:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
