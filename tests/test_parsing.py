"""agentk.parsing: numbers read out of text without pandas' segfault (pandas-dev/pandas#63650). Every call on a
crashing string runs in a child process: a failure here is a dead child, not a dead test run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from agentk.parsing import overflowing, read_csv, to_numeric

# strings pandas 2.x's float parser crashes on: digits, an e, an exponent past 2**31 (Kaggle's hex ids read so)
CRASHING = [
    "028e454608203890",
    "1e2147483648",
    "7E99999999999",
    "-3.5e+4294967296",
    " 12e300000000000 ",
    "240e8198484372e2",  # only its start reads as a number: the parser overflows before it finds the rest
    "31e2147483648abc",
]
HARMLESS = ["1e5", "2.5E-3", "1e308", "0e0000000000000001", "abc", "", "1,000", "e12345678901", "0x1e5"]


def _child(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(int(pd.__version__.split(".")[0]) >= 3, reason="pandas 3 fixed the crash")
def test_the_strings_crash_pandas_itself():
    """The cases are real: unguarded, each one kills the process (if this fails, pandas fixed it: drop the guard)."""
    for s in CRASHING[:2] + CRASHING[-2:]:
        done = _child(f"import pandas as pd; pd.to_numeric(pd.Series([{s!r}]), errors='coerce')")
        assert done.returncode == -signal.SIGSEGV, (s, done.returncode, done.stderr[-300:])
    done = _child("import io, pandas as pd; pd.read_csv(io.StringIO('id,x\\n028e454608203890,1\\n'))")
    assert done.returncode == -signal.SIGSEGV


def test_overflowing_flags_exactly_the_crashing_strings():
    assert overflowing(CRASHING).all()
    assert not overflowing(HARMLESS + [1.5, None, np.nan, 7]).any()


def test_the_helper_reads_them_as_text_and_everything_else_as_pandas_does():
    done = _child(
        """
        import io, json, sys, numpy as np, pandas as pd
        from agentk.parsing import read_csv, to_numeric
        crashing = json.loads(sys.argv[1])
        out = {}
        out["coerce"] = to_numeric(pd.Series(crashing + ["1.5", None]), errors="coerce").tolist()
        out["scalar"] = [to_numeric(s, errors="coerce") for s in crashing]
        out["list"] = to_numeric(["2", crashing[0]], errors="coerce").tolist()
        out["index"] = to_numeric(pd.Index(["3", crashing[1]], name="i"), errors="coerce").tolist()
        try:
            to_numeric(pd.Series(["1", crashing[0]]))
        except ValueError as exc:
            out["raise"] = str(exc)
        out["ignore"] = to_numeric(pd.Series(["1", crashing[0]]), errors="ignore").tolist()
        text = "id,x,h\\n" + "".join(f"{s.strip()},{i}.5,abc{i}\\n" for i, s in enumerate(crashing))
        df = read_csv(io.StringIO(text))
        out["csv"] = [str(df[c].dtype) for c in df] + [df["id"].tolist() == [s.strip() for s in crashing]]
        df = read_csv(io.StringIO(text.replace(",", ";")), sep=None, engine="python")
        out["python engine"] = [str(df[c].dtype) for c in df]
        print(json.dumps(out, default=str))
        """,
        json.dumps(CRASHING),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    nan = float("nan")
    assert np.allclose(out["coerce"], [nan] * len(CRASHING) + [1.5, nan], equal_nan=True)
    assert all(v != v for v in out["scalar"])  # NaN
    assert np.allclose(out["list"], [2, nan], equal_nan=True)
    assert np.allclose(out["index"], [3, nan], equal_nan=True)
    assert out["raise"] == f'Unable to parse string "{CRASHING[0]}" at position 1'
    assert out["ignore"] == ["1", CRASHING[0]]  # errors="ignore": the input back, as pandas does
    assert out["csv"] == ["object", "float64", "object", True]  # the ids stay text, the numbers numbers
    assert out["python engine"] == ["object", "float64", "object"]


def test_guarded_pandas_protects_code_agentk_does_not_write():
    """After guard_pandas(), pandas' own entry points (what AutoGluon and generated code call) survive them too."""
    done = _child(
        """
        import io, pandas as pd
        from agentk.parsing import guard_pandas
        guard_pandas()
        s = "028e454608203890"
        assert pd.isna(pd.to_numeric(s, errors="coerce"))
        assert pd.to_numeric(pd.Series([s, "2"]), errors="coerce").tolist()[1] == 2.0
        for read in (pd.read_csv, pd.read_table):
            sep = "," if read is pd.read_csv else "\\t"
            df = read(io.StringIO(f"id{sep}x\\n{s}{sep}1.5\\n"))
            assert df["id"].tolist() == [s] and df["x"].tolist() == [1.5], df
        df = pd.read_csv(io.StringIO(f"id,x\\n{s},1.5\\n"), engine="python")
        assert df["id"].tolist() == [s], df
        from autogluon.common.features.infer_types import get_type_map_raw
        from autogluon.features.generators import AutoMLPipelineFeatureGenerator
        X = pd.DataFrame({"h": [s, "5f1e", "abc"] * 10, "y": range(30)})
        AutoMLPipelineFeatureGenerator(verbosity=0).fit_transform(X)
        print("survived")
        """
    )
    assert done.returncode == 0 and "survived" in done.stdout, (done.returncode, done.stderr[-2000:])


def test_numbers_read_as_before():
    """The guard changes nothing for ordinary cells: the same frame as pandas' own reading."""
    import io

    text = "a,b,c,d\n1,2.5,x,1e5\n3,-0.125,y,\n,1e-300,z,7\n"
    pd.testing.assert_frame_equal(read_csv(io.StringIO(text)), pd.read_csv(io.StringIO(text)))
    s = pd.Series(["1", "2.5", "-3e2", "x", None])
    pd.testing.assert_series_equal(to_numeric(s, errors="coerce"), pd.to_numeric(s, errors="coerce"))


def test_generated_code_runs_guarded(tmp_path):
    """A stage's program (an LLM's as much as the expert's) reads the crashing strings with plain pandas and lives:
    the sandboxed runner guards pandas before it runs the program."""
    from agentk.core.checks import run_checks

    (tmp_path / "data.csv").write_text("id,x\n028e454608203890,1.5\nab12,2\n")
    (tmp_path / "code_stage.py").write_text(
        "import pandas as pd\n"
        "df = pd.read_csv('data.csv')\n"
        "assert df['id'].tolist() == ['028e454608203890', 'ab12'], df\n"
        "assert pd.to_numeric(df['id'], errors='coerce').isna().all()\n"
        "df.to_csv('out.csv', index=False)\n"
    )
    report = run_checks([], tmp_path, timeout=120, code="code_stage.py", output="out.csv")
    assert report.passed, report.error


def test_a_wide_header_of_repeated_names_reads_as_pandas_reads_it(tmp_path):
    """Thousands of columns under one name (a trailing run of empty columns): the header is read ahead and its names
    given to pandas (which renamed 20,000 repeats in 23 s), with the same table as the result."""
    path = tmp_path / "wide.csv"
    header = ["id", "x", "", "x", "x.1", "", "x", *(["empty"] * 1200), "empty.3", "Unnamed: 2"]
    rows = [["a1", "1.5", "", "", "", "", "", *([""] * 1200), "7", "1"], ["b2", "2.5", *([""] * 1205), "8", "2"]]
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    ours, theirs = read_csv(path), pd.read_csv(path, header=0)  # header=0: pandas' own renaming, not read ahead
    assert list(ours.columns) == list(theirs.columns) and len(set(ours.columns)) == len(header)
    pd.testing.assert_frame_equal(ours, theirs)
    tsv = tmp_path / "wide.tsv"  # tabs, a byte-order mark, commas inside names
    tsv.write_text("\ufeff" + "\n".join("\t".join(c.replace("x", "x,y") for c in r) for r in [header, *rows]) + "\n")
    pd.testing.assert_frame_equal(read_csv(tsv, sep="\t"), pd.read_csv(tsv, sep="\t", header=0))
    kept = {"dtype": {"x": str, "empty": str}, "nrows": 1}  # a repeat of a name gets its dtype, as in pandas
    pd.testing.assert_frame_equal(read_csv(path, **kept), pd.read_csv(path, header=0, **kept))
