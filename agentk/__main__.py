"""`python -m agentk`, the `agentk` command: a command that reads the user's data is watched from here, a process
that imports nothing heavy (agentk/core/crash.py), and runs in a child; the rest runs agentk.cli here."""

import sys

from agentk.cli import main as cli
from agentk.core.crash import watch


def main() -> None:
    watch(sys.argv[1:])

    cli()


if __name__ == "__main__":
    main()
