"""Call generated code from a check without importing it into the check's process: `call_isolated(fn, ws, **data)`
runs `fn(ws, out, **data)` (a function of the check's own module) in a separate sandboxed child (`run_python`: the
workspace as cwd, the same limits), where it loads the stage's generated modules, calls them and records each result
in the dict `out` as it gets it. The check gets an `Outcome` back and asserts on it in its own process, which the
generated code's import-time code never reaches: it cannot patch the check, `agentk.core.checks` or the result line.

What crosses between the processes is plain data, written to a fresh folder in the workspace: JSON, and arrays in
an .npz read without pickles. Plain data is None, bool, int, float, str, lists, tuples and dicts of them, numpy
arrays and scalars, pandas Series and DataFrames (their dtypes kept); anything else comes back as `Opaque` (its
type's name). `data` (the inputs the check read itself, e.g. the targets) goes to the child the same way.

The child stops at the first error: the values it recorded before come back, and asking the `Outcome` for one it did
not get to raises that error in the check, in the check's order of asserts: an AssertionError (a `fail` in the
child, e.g. a missing module) with its message, or a `ChildError` whose message is the generated code's traceback
(or why the child died: a timeout, memory)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentk.core.sandbox import run_python

RESULT, ARGS = "result", "args"  # <name>.json and <name>.npz in the call's folder
MARKS = "@@agentk"  # the child's output lines that could pass for the check process's own result lines: dropped
ARRAY_KINDS = "biufcmMSU"  # numpy dtypes .npz stores without pickles
# The check process (agentk.core.checks) sets these: a child gets the check's memory limit and what is left of its time.
limits: dict[str, float | None] = {"deadline": None, "memory_gb": 16.0}
DEFAULT_TIMEOUT = 600.0


class ChildError(Exception):
    """Generated code crashed or the child died; the message says where (its traceback) or why (timeout, memory)."""


@dataclass(frozen=True)
class Opaque:
    """A value the child recorded that is not plain data, by its type's name (e.g. a formatter returning a list)."""

    type_name: str


def type_name(value: Any) -> str:
    """The name of a value's type as the generated code made it (an Opaque's own name)."""
    return value.type_name if isinstance(value, Opaque) else type(value).__name__


class Outcome:
    """The values a child recorded; the error that stopped it raises when a value it did not get to is asked for."""

    def __init__(self, values: dict[str, Any], error: dict | None):
        self.values, self.error = values, error

    def __getitem__(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        if self.error is not None:
            raise AssertionError(self.error["text"]) if self.error["kind"] == "fail" else ChildError(self.error["text"])
        raise KeyError(f"the child function recorded no {key!r}")  # a check asked for what its function never records

    def __contains__(self, key: str) -> bool:
        return key in self.values


def call_isolated(fn: Callable[..., None], ws: Path, **data: Any) -> Outcome:
    """Run `fn(ws, out, **data)` in a sandboxed child and return what it recorded in `out` (see the module's text).
    What the child prints is printed here (the check's output), without lines that look like the checks' markers."""
    ws = Path(ws).resolve()
    folder = Path(tempfile.mkdtemp(prefix=".agentk-call-", dir=ws))
    try:
        _write(folder, ARGS, data)
        job = {"fn": function_spec(fn), "folder": folder.name}
        deadline, memory_gb = limits["deadline"], limits["memory_gb"]
        timeout = DEFAULT_TIMEOUT if deadline is None else max(1.0, deadline - time.monotonic())
        res = run_python(["-P", "-m", __name__, json.dumps(job)], cwd=ws, timeout=timeout, memory_gb=memory_gb)
        printed = [ln for ln in res.stdout.splitlines() if not ln.startswith(MARKS)]
        if printed:
            print("\n".join(printed), flush=True)
        if (folder / f"{RESULT}.json").exists() and not res.timed_out:
            try:
                return Outcome(*_read(folder, RESULT))
            except Exception as exc:  # noqa: BLE001 - the child wrote what it liked: unreadable is its error
                raise ChildError(f"the generated code's results could not be read ({exc})") from None
        if res.ok:
            error = f"exit code 0 before its results were written (os._exit?)\n{res.stderr.strip()[-2000:]}".strip()
        else:
            error = res.error()
        raise ChildError(f"The generated code did not finish: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def function_spec(fn: Callable) -> dict:
    """How a child finds a function: its module (by name, else by file) and its qualified name."""
    return {"module": fn.__module__, "file": sys.modules[fn.__module__].__file__, "name": fn.__qualname__}


def import_function(spec: dict) -> Callable:
    try:
        module = importlib.import_module(spec["module"])
    except ImportError:  # a module outside the installed packages (e.g. a test's own checks)
        s = importlib.util.spec_from_file_location(spec["module"], spec["file"])
        module = importlib.util.module_from_spec(s)
        sys.modules[spec["module"]] = module
        s.loader.exec_module(module)
    obj = module
    for part in spec["name"].split("."):
        obj = getattr(obj, part)
    return obj


def describe(exc: BaseException) -> str:
    """Assertion-style failures speak for themselves; crashes inside generated code need their traceback."""
    if isinstance(exc, (AssertionError, ChildError)):
        return str(exc)
    return "".join(traceback.format_exception(exc)[-6:]).strip()


# ---- plain data in files ---------------------------------------------------------------------------------------
def _write(folder: Path, name: str, values: dict[str, Any], error: dict | None = None) -> None:
    import numpy as np

    arrays: dict[str, Any] = {}
    encoded = {}
    for key, value in values.items():
        try:
            encoded[str(key)] = _encode(value, arrays)
        except Exception:  # noqa: BLE001 - a value that will not turn into data is shown by its type
            encoded[str(key)] = {"opaque": type(value).__name__}
    np.savez(folder / f"{name}.npz", **arrays)
    (folder / f"{name}.json").write_text(json.dumps({"values": encoded, "error": error}))


def _read(folder: Path, name: str) -> tuple[dict[str, Any], dict | None]:
    import numpy as np

    with np.load(folder / f"{name}.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    written = json.loads((folder / f"{name}.json").read_text())
    error = written["error"]
    if error is not None and not (isinstance(error.get("kind"), str) and isinstance(error.get("text"), str)):
        raise ValueError(f"malformed error {str(error)[:200]}")
    return {key: _decode(value, arrays) for key, value in written["values"].items()}, error


def _encode(v: Any, arrays: dict) -> dict:
    import numpy as np
    import pandas as pd

    if v is None or isinstance(v, (bool, str)) or type(v) in (int, float):
        return {"json": v}
    if isinstance(v, (list, tuple)):
        return {type(v).__name__ if type(v) in (list, tuple) else "list": [_encode(x, arrays) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[_encode(k, arrays), _encode(x, arrays)] for k, x in v.items()]}
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in ARRAY_KINDS:
        return {"scalar" if isinstance(v, np.generic) else "array": _store(np.asarray(v), arrays)}
    if isinstance(v, np.ndarray):  # objects: each one encoded
        return {"objects": [_encode(x, arrays) for x in v.ravel().tolist()], "shape": list(v.shape)}
    if isinstance(v, pd.DataFrame):
        columns = [_column(v.iloc[:, j], arrays) for j in range(v.shape[1])]
        labels = [_encode(c, arrays) for c in v.columns.tolist()]
        return {"frame": {"columns": labels, "data": columns, "index": _index(v.index, arrays), "rows": len(v)}}
    if isinstance(v, pd.Series):
        return {
            "series": {"name": _encode(v.name, arrays), "data": _column(v, arrays), "index": _index(v.index, arrays)}
        }
    return {"opaque": type(v).__name__}


def _store(a, arrays: dict) -> str:
    key = f"a{len(arrays)}"
    arrays[key] = a
    return key


def _column(s, arrays: dict) -> dict:
    """A Series' values: numpy dtypes as an array, the rest (object, string, category, nullable) cell by cell."""
    import numpy as np

    if isinstance(s.dtype, np.dtype) and s.dtype.kind in ARRAY_KINDS:
        return {"array": _store(s.to_numpy(), arrays)}
    return {"cells": [_cell(x) for x in s.tolist()], "dtype": str(s.dtype)}


def _cell(x: Any) -> Any:
    import numpy as np
    import pandas as pd

    if x is None or isinstance(x, (bool, str)) or type(x) in (int, float):
        return x
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return x.item()
    if x is pd.NA or x is pd.NaT:
        return None
    return str(x)


def _index(index, arrays: dict) -> dict:
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return {"range": [index.start, index.stop, index.step]}
    return {"values": _column(index.to_series(), arrays)}


def _decode(e: dict, arrays: dict) -> Any:
    import numpy as np
    import pandas as pd

    (kind, body), *_ = e.items()
    if kind == "json":
        return body
    if kind in ("list", "tuple"):
        items = [_decode(x, arrays) for x in body]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {_decode(k, arrays): _decode(x, arrays) for k, x in body}
    if kind == "array":
        return arrays[body]
    if kind == "scalar":
        return arrays[body][()]
    if kind == "objects":
        out = np.empty(len(body), dtype=object)
        out[:] = [_decode(x, arrays) for x in body]
        return out.reshape(e["shape"])
    if kind == "frame":
        columns = [_series(c, arrays).reset_index(drop=True) for c in body["data"]]
        frame = pd.concat(columns, axis=1, ignore_index=True) if columns else pd.DataFrame(index=range(body["rows"]))
        frame.columns = [_decode(c, arrays) for c in body["columns"]]
        frame.index = _decode_index(body["index"], arrays)
        return frame
    if kind == "series":
        s = _series(body["data"], arrays)
        s.index, s.name = _decode_index(body["index"], arrays), _decode(body["name"], arrays)
        return s
    if kind == "opaque":
        return Opaque(str(body))
    raise ValueError(f"unknown value kind {kind!r}")


def _series(c: dict, arrays: dict):
    import pandas as pd

    if "array" in c:
        return pd.Series(arrays[c["array"]])
    s = pd.Series(c["cells"], dtype=object)
    if c["dtype"] != "object":
        try:
            s = s.astype(c["dtype"])
        except (TypeError, ValueError):
            pass  # a dtype pandas cannot rebuild from its name: the values stay, as objects
    return s


def _decode_index(e: dict, arrays: dict):
    import pandas as pd

    return pd.RangeIndex(*e["range"]) if "range" in e else pd.Index(_series(e["values"], arrays))


# ---- the child ---------------------------------------------------------------------------------------------------
def _main(payload: str) -> None:
    """In the child: the function is imported before the workspace joins sys.path (after the installed packages:
    generated modules live in the workspace, the cwd, and import each other, but shadow nothing)."""
    job = json.loads(payload)
    folder = Path(job["folder"]).resolve()
    out: dict[str, Any] = {}
    error = None
    try:
        fn = import_function(job["fn"])
        data, _ = _read(folder, ARGS)
        sys.path.append(".")
        fn(Path(".").resolve(), out, **data)
    except AssertionError as exc:
        error = {"kind": "fail", "text": str(exc)[:6000]}
    except BaseException as exc:  # noqa: BLE001 - generated code may raise anything
        error = {"kind": "error", "text": describe(exc)[:6000]}
    _write(folder, RESULT, out, error)


if __name__ == "__main__":
    import faulthandler

    from agentk.parsing import guard_pandas

    faulthandler.enable()  # a native crash of the generated code says where, on the stderr the parent reads
    guard_pandas()  # generated code (an LLM's too) reads text as numbers through pandas: not the crashing strings
    _main(sys.argv[1])
