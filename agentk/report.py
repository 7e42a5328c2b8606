"""`agentk report`: what happened in a workspace, as one self-contained HTML page (plots are matplotlib PNGs inside
the page as data URIs; nothing is fetched from the network, so the file can be mailed or archived alone).

Sections: the task, the setup's trajectory, the solutions (learning curves and HEBO trials of each network,
AutoGluon's leaderboard), the blend, and the submission checked against the sample. A section whose files do not
exist yet (no solve) says so. The page helpers (`figure`, `table`, `page`) serve the curriculum's report too.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from datetime import UTC, datetime
from pathlib import Path

from agentk.core.errors import BadInput
from agentk.core.fileio import read_json, read_jsonl, write_text
from agentk.parsing import read_csv
from agentk.submit import solve_status
from agentk.workspace import METRIC, Workspace
from tools.task_data import held_out

PREVIEW_ROWS = 8
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#222}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em} nav a{margin-right:1em} .muted{color:#666} .ok{color:#1a7f37} .bad{color:#c62828}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:13px} th,td{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;border:1px solid #eee;margin:.3em 0} pre{background:#f7f7f7;padding:.6em;overflow-x:auto;
white-space:pre-wrap} .row{display:flex;gap:1.5em;flex-wrap:wrap} .row>div{flex:1;min-width:300px}
"""


# ---- page pieces -------------------------------------------------------------------------------------
def esc(value) -> str:
    return html.escape(str(value))


def number(x, digits: int = 5) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def table(headers: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    """An HTML table; cells are escaped unless they are Raw."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if i in numeric else ''}>{c if isinstance(c, Raw) else esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Raw(str):
    """HTML that table() puts in a cell as it is."""


def pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt

    return plt


def figure(fig, alt: str) -> str:
    """A matplotlib figure as an <img> with the PNG inside; the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    pyplot().close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def page(title: str, subtitle: str, sections: list[tuple[str, str, str]]) -> str:
    """The whole document: sections are (anchor, heading, html body)."""
    nav = "".join(f'<a href="#{a}">{esc(h)}</a>' for a, h, _ in sections)
    body = "".join(f'<section id="{a}"><h2>{esc(h)}</h2>{b}</section>' for a, h, b in sections)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1><p class=muted>{esc(subtitle)} · written {when}</p>"
        f"<nav>{nav}</nav>{body}</body></html>"
    )


def link(target: Path, base: Path, text: str | None = None) -> str:
    """A relative link from a page in `base` to a file beside it, or the plain text when the file is missing."""
    if not target.exists():
        return esc(text or target.name)
    return f'<a href="{esc(target.relative_to(base).as_posix())}">{esc(text or target.name)}</a>'


# ---- the workspace's report ----------------------------------------------------------------------------
def write_report(root: Path) -> Path:
    """Writes <root>/report.html and returns its path; BadInput when root holds no setup."""
    ws = Workspace(root)
    state = read_json(ws.setup_state)
    if state is None:
        raise BadInput(f"{root} holds no setup: run `agentk setup <competition> --workspace {root}` first")
    meta = read_json(ws.meta, {})
    name = meta.get("name") or root.name
    sections = [
        ("task", "Task", _task(ws, meta)),
        ("setup", "Setup", _setup(ws, state)),
        ("solutions", "Solutions", _solutions(ws)),
        ("blend", "Blend", _blend(ws)),
        ("submission", "Submission", _submission(ws)),
    ]
    doc = page(f"agentk report: {name}", f"workspace {root}", sections)
    write_text(ws.report, doc)
    return ws.report


def metric_of(ws: Workspace) -> tuple[str, bool | None]:
    """The metric's name and direction, read from the generated metric's source (no generated code runs here)."""
    code = ws.code(METRIC)
    text = code.read_text() if code.exists() else ""
    name = re.search(r"^METRIC\s*=\s*['\"]([^'\"]+)", text, re.M)
    higher = re.search(r"^HIGHER_IS_BETTER\s*=\s*(True|False)", text, re.M)
    return (name.group(1) if name else "unknown"), (higher.group(1) == "True" if higher else None)


def _direction(higher: bool | None) -> str:
    return "" if higher is None else " (higher is better)" if higher else " (lower is better)"


def _task(ws: Workspace, meta: dict) -> str:
    metric, higher = metric_of(ws)
    modalities = read_json(ws.modalities, {})
    facts = [
        ["source", meta.get("source") or read_json(ws.setup_state, {}).get("source", "")],
        ["metric", metric + _direction(higher)],
        ["inputs", ", ".join(modalities.get("inputs", [])) or "–"],
        ["targets", ", ".join(modalities.get("targets", [])) or "–"],
        ["task type", modalities.get("task_type", "–")],
    ]
    summary = ws.summary.read_text() if ws.summary.exists() else "(no summary yet)"
    return table(["", ""], facts) + f"<h3>Summary (the summarise stage)</h3><pre>{esc(summary)}</pre>"


def _setup(ws: Workspace, state: dict) -> str:
    steps = read_jsonl(ws.trajectory)
    llm = f", {state.get('llm_calls', 0)} LLM calls, {state.get('tokens', 0)} tokens" if state.get("llm_calls") else ""
    status = state.get("status", "?")
    head = (
        f"<p>Status <b class={'ok' if status == 'done' else 'bad'}>{esc(status)}</b> with the "
        f"{esc(state.get('policy', '?'))} policy: {len(steps)} steps in {number(state.get('seconds', 0.0), 3)} s, "
        f"{state.get('backtracks', 0)} backtracks{esc(llm)}."
        + (
            f" Failed at <b>{esc(state.get('failed_stage'))}</b>: {esc(state.get('reason'))}"
            if state.get("reason")
            else ""
        )
        + f" Log: {link(ws.setup_log, ws.root)}.</p>"
    )
    per: dict[str, dict] = {}
    for s in steps:
        p = per.setdefault(s["stage"], {"steps": 0, "retries": 0, "ca": 0, "seconds": 0.0, "tokens": 0, "calls": 0})
        p["steps"] += 1
        p["retries"] += s.get("mode") == "retry"
        p["ca"] += s.get("mode") == "credit_assignment"
        p["seconds"] += s.get("seconds") or 0.0
        p["tokens"] += s.get("tokens") or 0
        p["calls"] += s.get("llm_calls") or 0
    rows = []
    for name, st in state.get("stages", {}).items():
        p = per.get(name, {"steps": 0, "retries": 0, "ca": 0, "seconds": 0.0, "tokens": 0, "calls": 0})
        tests = ", ".join(f"{k}: {v}" for k, v in st.get("tests", {}).items())
        cls = "ok" if st.get("status") == "passed" else "bad"
        rows.append(
            [
                name,
                Raw(f"<span class={cls}>{esc(st.get('status'))}</span>"),
                st.get("attempts", 0),
                p["retries"],
                p["ca"],
                f"{p['seconds']:.1f}",
                p["tokens"],
                p["calls"],
                tests + (f" — {st['error'].strip().splitlines()[-1][:200]}" if st.get("error") else ""),
            ]
        )
    stages = table(
        [
            "stage",
            "status",
            "attempts",
            "retries",
            "credit-assignment steps",
            "seconds",
            "tokens",
            "LLM calls",
            "tests",
        ],
        rows,
        numeric={2, 3, 4, 5, 6, 7},
    )
    metas = table(
        ["meta-test", "status", "runs", "last error"],
        [
            [name, mt.get("status"), mt.get("runs", 0), (mt.get("error") or "")[:200]]
            for name, mt in state.get("meta_tests", {}).items()
        ],
        numeric={2},
    )
    dropped = state.get("hypotheses") or []
    search = (
        "<h3>Hypotheses the expert dropped</h3>"
        + table(
            ["decision", "dropped", "at stage", "mode", "because", "tried next"],
            [[d["decision"], d["dropped"], d["stage"], d.get("mode", ""), d["because"], d["next"]] for d in dropped],
        )
        if dropped
        else ""
    )
    return head + stages + metas + search + _joins(ws) + (_timeline(steps) if steps else "")


def _joins(ws: Workspace) -> str:
    """The tables the data graph joins to train and test (agentk.competition.joins), each lookup's path from the
    rows (train.building_id -> building_metadata.csv -> (site_id, timestamp) -> weather), and the input columns each
    brings: where the features beyond the train table come from (joins.json, written with the expert's maps);
    empty when there are none."""
    from agentk.competition.joins import recorded

    joins = recorded(ws.root)

    def rows(js, depth: int = 0) -> list[list]:
        out = []
        for j in js:
            cells = [j["table"], j.get("path", ""), j["how"], ", ".join(j["columns"])]
            out.append([("&nbsp;" * 4 * depth) + esc(cells[0]), *map(esc, cells[1:])])
            out += rows(j["via"], depth + 1)
        return out

    if not joins:
        return ""
    body = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows(joins)
    )  # cells escaped above: the indent is markup
    return (
        "<h3>Tables joined to train and test (the data graph)</h3><table><thead><tr><th>table</th><th>path</th>"
        f"<th>how</th><th>columns it brings</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _timeline(steps: list[dict]) -> str:
    """Each step as a bar on a time axis, one row per stage: green passed, red failed, hatched credit assignment."""
    plt = pyplot()
    order = list(dict.fromkeys(s["stage"] for s in steps))
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(order) + 1.2))
    t = 0.0
    for s in steps:
        width = max(s.get("seconds") or 0.0, 0.05)
        ax.barh(
            order.index(s["stage"]),
            width,
            left=t,
            color="#4caf50" if s.get("passed") else "#e53935",
            hatch="//" if s.get("mode") == "credit_assignment" else None,
            edgecolor="#333",
            linewidth=0.4,
        )
        t += width
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the setup started (steps end to end)")
    ax.set_title("setup trajectory: green passed, red failed, hatched credit assignment")
    return figure(fig, "setup trajectory")


def _solution_ids(ws: Workspace) -> list[str]:
    summary = read_json(ws.solve_summary) or {}
    ids = [s["id"] for s in summary.get("solutions", [])]
    found = sorted(p.parent.name for p in ws.solutions.glob("*/score.json")) if ws.solutions.exists() else []
    return ids + [i for i in found if i not in ids and i != Workspace.LIGHT]


def _solutions(ws: Workspace) -> str:
    metric, higher = metric_of(ws)
    summary = read_json(ws.solve_summary) or {}
    status = summary.get("status")

    note = (
        f"<p>Solve: <b class=ok>done</b> with the {esc(summary.get('budget'))} budget. Log: "
        f"{link(ws.solve_log, ws.root)}.</p>"
        if status == "done"
        else f"<p>Solve: <b class=bad>{esc(solve_status(ws.root))}</b>. Log: {link(ws.solve_log, ws.root)}.</p>"
    )
    rows, scores = [], []
    cv = None  # a small table's solutions are compared by their out-of-fold scores
    if summary.get("selected_by") == "cross-validation":
        cv = {s["id"]: s.get("cv_score") for s in summary.get("solutions", [])}
    light = read_json(ws.light.score)
    if light:
        rows.append(
            ["light (setup)", "light", Raw(number(light["score"])), *(["–"] if cv is not None else []), "–"]
            + [light.get("model", ""), ""]
        )
        scores.append(("light (setup)", light["score"]))
    for sid in _solution_ids(ws):
        files = ws.solution(sid)
        score, plan = read_json(files.score) or {}, read_json(files.plan) or {}
        best = " ★" if sid == summary.get("best") else ""
        rows.append(
            [
                sid + best,
                score.get("kind", ""),
                number(score.get("val_score")),
                *([number(cv.get(sid)) if cv.get(sid) is not None else "–"] if cv is not None else []),
                f"{score.get('seconds', 0):.0f}",
                plan.get("plan", ""),
                score.get("formatter", ""),
            ]
        )
        scores.append((sid, score.get("val_score")))
    if not rows:
        return note + "<p>No solution yet: run <code>agentk solve</code>.</p>"
    out = note + (
        f"<p>Validation {esc(metric)}{esc(_direction(higher))} on the validation rows every solution shares, "
        f"{esc(held_out(read_json(ws.split) or {}))} (the light solution was scored on the setup's own split). "
        "★ the submission's"
        + (
            ", chosen by the cross-validated score: each solution rebuilt on every fold of all the train rows (a "
            "small table's validation rows are too few to choose by)"
            if cv is not None
            else ""
        )
        + ".</p>"
    )
    columns = ["solution", "kind", "validation", *(["cross-validated"] if cv is not None else []), "seconds"]
    out += table([*columns, "plan", "formatter"], rows, numeric=set(range(2, len(columns))))
    out += _score_bars(scores, metric)
    for sid in _solution_ids(ws):
        files = ws.solution(sid)
        if files.trials.exists():
            out += _network(sid, read_jsonl(files.trials), metric)
        plan = read_json(files.plan) or {}
        for model in plan.get("models") or []:
            out += _leaderboard(sid, model, metric)
    return out


def _score_bars(scores: list[tuple[str, float | None]], metric: str) -> str:
    plt = pyplot()
    shown = [(n, s) for n, s in scores if s is not None and math.isfinite(s)]
    if not shown:
        return ""
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(shown) + 1))
    ax.barh([n for n, _ in shown], [s for _, s in shown], color="#5c6bc0")
    for i, (_, s) in enumerate(shown):
        ax.annotate(f"{s:.4g}", (s, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    low = min(s for _, s in shown)
    high = max(s for _, s in shown)
    pad = (high - low) * 0.3 or abs(high) * 0.05 or 1.0
    ax.set_xlim(low - pad, high + pad)
    ax.invert_yaxis()
    ax.set_xlabel(f"validation {metric}")
    ax.set_title("validation score of each solution")
    return figure(fig, "validation scores")


def _network(sid: str, trials: list[dict], metric: str) -> str:
    """A tuned network: its HEBO trials as a table and a plot, and each trial's learning curve."""
    plt = pyplot()
    rows = []
    for r in trials:
        rows.append(
            [
                r["trial"] + 1,
                number(float(r["params"]["lr"]), 3),
                r["params"]["optimizer"],
                number(r.get("stop_score"))
                if r.get("ok")
                else Raw(f"<span class=bad>{esc(r.get('error', 'failed'))}</span>"),
                number(r.get("stop_loss"), 4),
                number(r.get("val_score")) if r.get("ok") else "–",
                r.get("best_epoch", "–"),
                r.get("epochs", "–"),
                f"{r.get('seconds', 0):.1f}",
                "; ".join(r.get("notes", []))[:160],
            ]
        )
    out = f"<h3>{esc(sid)}: HEBO trials</h3>" + table(
        [
            "trial",
            "learning rate",
            "optimizer",
            f"stop rows' {metric} (tuned on)",
            "stop rows' loss at best epoch",
            f"validation {metric}",
            "best epoch",
            "epochs run",
            "seconds",
            "notes",
        ],
        rows,
        numeric={0, 1, 3, 4, 5, 6, 7, 8},
    )
    ok = [r for r in trials if r.get("ok") and "stop_score" in r]  # a record from before the stop rows: table only
    charts = []
    if ok:
        fig, ax = plt.subplots(figsize=(6, 3.2))
        for optimizer in sorted({r["params"]["optimizer"] for r in ok}):
            mine = [r for r in ok if r["params"]["optimizer"] == optimizer]
            ax.scatter([float(r["params"]["lr"]) for r in mine], [r["stop_score"] for r in mine], label=optimizer, s=36)
        for r in ok:
            ax.annotate(
                str(r["trial"] + 1),
                (float(r["params"]["lr"]), r["stop_score"]),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=8,
            )
        ax.set_xscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel(f"stop rows' {metric}")
        ax.set_title(f"{sid}: HEBO trials (numbered in order)")
        ax.legend(fontsize=8)
        charts.append(figure(fig, f"{sid} HEBO trials"))
    curves = [r for r in ok if r.get("history")]
    if curves:
        fig, (loss_ax, score_ax) = plt.subplots(1, 2, figsize=(10, 3.4))
        for r in curves:
            epochs = [h["epoch"] for h in r["history"]]
            label = f"trial {r['trial'] + 1}"
            line = loss_ax.plot(epochs, [h["train_loss"] for h in r["history"]], "--", lw=1)[0]
            loss_ax.plot(
                epochs, [h["stop_loss"] for h in r["history"]], "-", lw=1.4, color=line.get_color(), label=label
            )
            score_ax.plot(
                epochs, [h["stop_score"] for h in r["history"]], "-", lw=1.4, color=line.get_color(), label=label
            )
            if r.get("best_epoch") in epochs:
                best = r["history"][epochs.index(r["best_epoch"])]
                score_ax.plot([best["epoch"]], [best["stop_score"]], "o", color=line.get_color())
        loss_ax.set_title("training objective (dashed: rows learnt; solid: stop rows)", fontsize=10)
        loss_ax.set_xlabel("epoch")
        score_ax.set_title(f"stop rows' {metric} (dot: the epoch kept)", fontsize=10)
        fig.tight_layout()
        score_ax.set_xlabel("epoch")
        loss_ax.legend(fontsize=8)
        charts.append(figure(fig, f"{sid} learning curves"))
    return out + "".join(f"<div>{c}</div>" for c in charts)


def _leaderboard(sid: str, model: dict, metric: str) -> str:
    rows = [
        [
            m["model"] + (" ★" if m["model"] == model.get("best") else ""),
            number(m.get("score_val")),
            f"{m.get('fit_time', 0):.1f}",
        ]
        for m in model.get("leaderboard", [])
    ]
    return (
        f"<h3>{esc(sid)}: AutoGluon's models for {esc(model.get('output', ''))}</h3>"
        f"<p class=muted>score_val: {esc(metric)} on the validation rows, as AutoGluon reports it (higher is better: "
        f"losses appear negated). Model families whose optional packages are not installed are skipped.</p>"
        + table(["model", "score_val", "fit seconds"], rows, numeric={1, 2})
    )


def _blend(ws: Workspace) -> str:
    metric, _ = metric_of(ws)
    files = ws.solution("blend")
    kept, record = files.score.exists(), read_json(files.plan) if files.score.exists() else read_json(files.skipped)
    if record is None:
        return "<p>No blend: it runs once the budget's number of solutions exist.</p>"
    mean = record.get("how") == "mean"
    verdict = (
        f"<b class=ok>kept: the mean of {esc(', '.join(record.get('members') or []))}</b>"
        if kept and mean
        else "<b class=ok>kept: the MLP</b>"
        if kept
        else "<b class=bad>not kept</b>"
    )
    single = record.get("best_single_id", "the best single solution")
    return (
        f"<p>Blends of {esc(', '.join(record.get('inputs', [])))}: the mean of the best few, and an MLP blender; "
        f"one is kept when it beats the best single solution overall and on 90 % of bootstrap resamples of the "
        f"validation rows: {verdict}. The "
        f"figures are scored on the same validation rows: a mean's as it predicted them (it learns nothing from "
        f"them), the MLP's out of fold (5-fold cross-validation on those rows, since it is trained on them), the "
        f"single solution's as it predicted them; the blend's row shows the best blend tried.</p>"
        + table(
            ["", f"validation {metric}"],
            [
                ["blend (a mean as predicted, the MLP out of fold)", number(record.get("cv_score"))],
                [f"{single} (best single)", number(record.get("best_single"))],
            ],
            numeric={1},
        )
    )


def _submission(ws: Workspace) -> str:
    from agentk.competition.dataview import find_tables
    from agentk.competition.long_format import long_sample, record
    from tools.submission import SubmissionMismatch, compare_with_sample

    if not ws.submission.exists():
        return "<p>No submission yet.</p>"
    summary = read_json(ws.solve_summary) or {}
    if summary.get("status") == "done":
        origin = f"the solve's best solution, <b>{esc(summary.get('best'))}</b>"
    elif summary.get("submission"):
        origin = (
            f"<b class=bad>not a finished solve's</b> ({esc(solve_status(ws.root))}): the best solution it finished, "
            f"<b>{esc(summary['submission'])}</b>"
        )
    else:
        origin = f"<b class=bad>not a finished solve's</b> ({esc(solve_status(ws.root))}): the setup's light solution"
    sub = read_csv(ws.submission)
    try:
        compare_with_sample(ws.root, sub, ws.submission.name)
        check = "<b class=ok>matches the sample submission</b> (columns, ids, no gaps, value types)"
    except (SubmissionMismatch, KeyError, OSError, ValueError) as exc:
        check = f"<b class=bad>does not match the sample submission</b>: {esc(exc)}"
    sample_path = find_tables(ws.raw).get("sample")
    sample = read_csv(sample_path) if sample_path else None
    if record(ws.raw) is not None:  # the models' sample is the long one's wide form: show the one submitted
        sample = long_sample(ws.raw)
    head = (
        f"<p>{link(ws.submission, ws.root)} ({len(sub)} rows) is {origin}; it {check}.</p>"
        + "<div class=row><div><h3>submission, first rows</h3>"
        + _frame(sub.head(PREVIEW_ROWS))
        + "</div>"
    )
    if sample is not None:
        head += (
            f"<div><h3>sample submission ({len(sample)} rows), first rows</h3>{_frame(sample.head(PREVIEW_ROWS))}</div>"
        )
    return head + "</div>"


def _frame(frame) -> str:
    return table([str(c) for c in frame.columns], [[number(v) for v in row] for row in frame.itertuples(index=False)])
