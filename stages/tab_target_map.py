"""The train target map: first column "id", then one column per target, in original form."""

from __future__ import annotations

from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage, fill
from agentk.modalities import MODALITIES
from agentk.policies.analysis import Analysis
from agentk.workspace import ROLE_TARGET_MAP, TARGET_MAP, map_file
from stages.codegen import listing_rows, map_template, table_rows
from unit_tests_lib.maps import check_target_map

OUTPUT = map_file(TARGET_MAP)
TEMPLATE = map_template(
    OUTPUT,
    'first column "id", then one column per target (original values).',
    preview='table.describe(include="all").to_string()',
)


def expert(a: Analysis, ctx: Context) -> Action:
    cols = [t.source for t in a.targets if not t.onehot]
    listing = next((src for m in MODALITIES if (src := a.file_source("train", m)) and src.column is None), None)
    if listing is not None:  # the train samples are files labelled by folder or name
        lines = listing_rows(listing, labels=True) + [f"out = pd.DataFrame({{'id': ids, {cols[0]!r}: labels}})"]
    else:
        lines = table_rows(a, "train") + [
            f"out = pd.concat([pd.DataFrame({{'id': ids.to_numpy()}}), df[{cols!r}]], axis=1)"
        ]
    for t in a.targets:
        if t.onehot:  # exclusive outcomes in one-hot columns: the label is the name of the column holding the 1
            lines.append(f"out[{t.column!r}] = df[{t.columns!r}].idxmax(axis=1).to_numpy()")
    if a.metric_columns:  # identity sub-groups the metric reads; unannotated rows belong to none
        lines.append(f"out[{a.metric_columns!r}] = df[{a.metric_columns!r}].fillna(0).to_numpy()")
    renamed = {t.source: t.column for t in a.targets if t.source != t.column and not t.onehot}
    if renamed:
        lines.append(f"out = out.rename(columns={renamed!r})  # named as in the submission")
    for t in a.targets:
        if t.named:  # the label as the name of the column that submits its probability
            lines.append(f"out[{t.column!r}] = out[{t.column!r}].map(lambda v: {t.named!r}.get(str(v), v))")
        if t.kind == "binary" and all(isinstance(c, bool) for c in t.classes):  # "True"/"False" text -> bool
            lines.append(f"out[{t.column!r}] = out[{t.column!r}].astype(str).str.lower().eq('true')")
    lines.append("return out")
    return Action(code=fill(TEMPLATE, "\n".join(lines)))


STAGE = Stage(
    TARGET_MAP,
    f"Write code that builds {OUTPUT}: 'id' then one column per target, original values.",
    output=OUTPUT,
    template=TEMPLATE,
    checks=[Check(check_target_map)],
    expert=expert,
    role=ROLE_TARGET_MAP,
    hints="Per-class probability submissions: map the single label column, not one column per class.",
)
