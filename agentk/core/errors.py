"""The two ways agentk stops early, and the exit codes the CLI (agentk/cli.py) gives them."""


class BadInput(Exception):
    """Bad input or an unsupported task: exit 2 with this one-line message."""

    exit_code = 2


class AgentFailed(Exception):
    """The agent tried and ran out of budget: exit 1; the workspace says where."""

    exit_code = 1
