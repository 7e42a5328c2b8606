"""Usage errors are bad input like any other: one line `agentk: ...`, exit 2, nothing else on the console."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, agentk


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ("setup", "--bogus", EXAMPLES / "iris-species"),
            "agentk: No such option: --bogus (Possible options: --verbose) (see `agentk setup --help`)",
        ),
        (("frobnicate",), "agentk: No such command 'frobnicate'. (see `agentk --help`)"),
        (("solve", "--budget"), "agentk: Option '--budget' requires an argument. (see `agentk solve --help`)"),
        (("curriculum",), "agentk: Missing argument 'pool'. (see `agentk curriculum --help`)"),
    ],
)
def test_a_usage_error_is_one_line(args, line):
    done = agentk(*args, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [line] and done.stdout == ""


def test_help_and_version_still_print():
    assert agentk("--version", timeout=60).stdout.startswith("agentk ")
    done = agentk("setup", "--help", timeout=60)
    assert done.returncode == 0 and "--resume" in done.stdout
