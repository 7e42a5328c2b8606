"""Stored fixes as tips for the expert policy.

The expert writes each stage from a template, so on a retry it would write the same failing code again. A fix
in long-term memory is an edit (failing code → fixed code) that made a similar error go away in an earlier
setup; where that edit applies to the expert's own code (every changed block found, with its neighbouring
lines, exactly once), the expert retries with the edited code instead.
"""

from __future__ import annotations

import difflib


def apply_fix(failing: str, fixed: str, code: str, context: int = 1) -> str | None:
    """`code` with the edit failing → fixed applied, or None when some changed block (with `context` lines
    around it) is not found exactly once in `code`, or when the edit changes nothing."""
    a, b, out = failing.splitlines(), fixed.splitlines(), code.splitlines()
    hunks = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not hunks:
        return None
    for _tag, i1, i2, j1, j2 in reversed(hunks):  # last first, so earlier hunks' positions in `a` stay valid
        before, after = a[max(0, i1 - context) : i1], a[i2 : i2 + context]
        old, new = before + a[i1:i2] + after, before + b[j1:j2] + after
        if not old:
            return None  # an edit of an empty file has no anchor
        at = [k for k in range(len(out) - len(old) + 1) if out[k : k + len(old)] == old]
        if len(at) != 1:
            return None
        out[at[0] : at[0] + len(old)] = new
    patched = "\n".join(out) + ("\n" if code.endswith("\n") else "")
    return patched if patched != code else None
