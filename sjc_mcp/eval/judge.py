"""``sjc eval``: measure a judge on labelled provenance cases, as a user meets it.

What a user sees is the list of entries sjc deleted, so the report leads with the product's decision
(the threshold and margin, the entries the judge cannot say why it would delete, the incomplete-span
rule and the prune-share guard, applied by ``pipeline.decide_entries`` exactly as ``sjc prune`` applies
them): **prune precision** (deleted entries that are labelled unsupported), **true entries lost per
compaction** (supported entries deleted, per case) and **unsupported removed** (the share of unsupported
entries deleted); overall, per set, per section and per case. Beside them, AUROC of the score against
``supported`` overall and within the forward-looking sections (pending tasks, next steps, current work,
decisions, plans, task state: where invented entries live), precision and recall of "kept", a score
histogram and the decision as the threshold moves.

``policy="paper"`` does not count user messages as a source. ``loo=True`` scores each case with lexical
weights fitted on the other cases only (leave one case out); ``lopo=True`` on the cases of the other
projects only (leave one project out: a case's ``project``, else the repository its transcript ran in,
else its id). A case under a ``slices`` folder is scored but never fitted on. ``calibrate`` fits the
shipped weights.

Here: the judging, the fitting and the splits. A case made ready and the product's decision on it:
``eval.prepared``; the figures and the text of the report: ``eval.report``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError
from sjc_mcp.eval.cases import Case, case_paths, load_case, match_labels
from sjc_mcp.eval.prepared import Prepared, decisions, prepare, supported
from sjc_mcp.eval.report import metrics, summarise
from sjc_mcp.judges.base import Judge
from sjc_mcp.models import DOUBTFUL, JudgeOutput


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.n = total, enabled and sys.stderr.isatty(), 0

    def step(self, name: str) -> None:
        self.n += 1
        if self.enabled:
            width = 30
            done = int(width * self.n / max(1, self.total))
            sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {self.n}/{self.total} {name[:40]:40}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 90 + "\r")


def evaluate(
    paths: Sequence[str],
    config: Config,
    *,
    judge: Judge | None = None,
    policy: str = "sjc",
    loo: bool = False,
    lopo: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Score every labelled entry and summarise. With ``loo`` (or ``lopo``) each case is scored by
    lexical weights fitted without it: without the case itself (``loo``), or without every case of its
    project (``lopo``, the main report then); ``group_out`` adds the other splits: leave one project out,
    leave one set out (fit on the real cases, score the synthetic ones, and the other way round: a kind of
    session never seen) and leave one session out (both boundaries of a session go out together)."""
    from sjc_mcp.judges import make_judge

    if policy == "paper":
        config = config.replace(sources=[s for s in config.sources if s != "user_message"])
    cases = [load_case(p) for p in case_paths(paths)]
    judge = judge or make_judge(config)
    bar = _Progress(len(cases), progress)
    prepared = []
    for case in cases:
        bar.step(case.id)
        prepared.append(prepare(case, config))
    bar.close()
    meta = {
        "cases": len(cases),
        "labelled": sum(len(c.labels) for c in cases),
        "threshold": config.threshold,
        "margin": config.margin,
        "max_prune_share": config.max_prune_share,
        "policy": policy,
        "projects": len({c.project for c in cases}),
    }
    if not (loo or lopo):
        entries, by_case, outs = _score(prepared, lambda _: judge, policy, config)
        return summarise(entries, by_case, outs, prepared, config, judge=judge.name, **meta)
    return _group_out(prepared, judge, policy, config, lopo, meta)


def _group_out(
    prepared: list[Prepared], judge: Judge, policy: str, config: Config, lopo: bool, meta: dict[str, Any]
) -> dict[str, Any]:
    """The report with each case scored by lexical weights fitted without its group: its case (the main
    report without ``lopo``), its project (with it), its set, its session; the other splits in
    ``group_out``."""
    from sjc_mcp.judges.lexical import LexicalJudge

    lexical = LexicalJudge()
    feats = {p.case.id: lexical.features(p.request) for p in prepared}
    rows = {p.case.id: _labelled_rows(p, policy, feats[p.case.id]) for p in prepared}
    fitted = {p.case.id for p in prepared if not is_slice(p.case)}
    splits = {
        "case": {p.case.id: p.case.id for p in prepared},
        "project": {p.case.id: p.case.project for p in prepared},
        "set": {p.case.id: p.case.origin for p in prepared},
        "session": {p.case.id: _session(p.case) for p in prepared},
    }
    reports = {}
    unfit: dict[str, str] = {}
    for name, group in splits.items():
        models = _fit_out({k: v for k, v in rows.items() if k in fitted}, group)
        if any(m is None for m in models.values()):  # a group whose others give no labelled entries of both kinds
            unfit[name] = ", ".join(sorted(g for g, m in models.items() if m is None))
            if name != ("project" if lopo else "case"):
                continue
            raise InputError(f"cannot leave one {name} out: nothing of both kinds to fit on without {unfit[name]}")

        def pick(cid: str, m: dict[str, Any] = models, g: dict[str, str] = group) -> Any:
            return m[g[cid]]

        entries, by_case, outs = _score(prepared, pick, policy, config, feats)
        reports[name] = summarise(
            entries, by_case, outs, prepared, config, judge=f"{judge.name} (leave-one-{name}-out)", **meta
        )
    main = "project" if lopo else "case"
    report = reports[main]
    report["group_out"] = {
        name: {"overall": r["overall"], **dict(r["by_set"].items())} for name, r in reports.items() if name != main
    }
    if unfit:
        report["group_out_skipped"] = {name: f"nothing to fit on without {g}" for name, g in unfit.items()}
    return report


def is_slice(case: Case) -> bool:
    """A case under a ``slices`` folder: a real compaction whose transcript starts mid-session, labelled
    ``none`` where the source lies before the file. Scored, never fitted on (low word overlap means
    "unsupported" there, which is not how unsupported entries look in complete sessions)."""
    from pathlib import Path

    return "slices" in Path(case.path).parts[:-1]


def _session(case: Case) -> str:
    """Cases from one transcript (its first and second compaction) are one session."""
    return case.boundary.session_id or case.id


def _fit_out(rows: dict[str, list[tuple[list[float], bool]]], group: dict[str, str]) -> dict[str, Any]:
    """For each group, lexical weights fitted on the cases of every other group (``rows``: the cases
    that may be fitted on)."""
    from sjc_mcp.judges.lexical import LexicalJudge, fit_weights

    models: dict[str, Any] = {}
    for g in sorted(set(group.values())):
        train = [r for cid, rs in rows.items() if group[cid] != g for r in rs]
        if not any(y for _, y in train) or all(y for _, y in train):
            models[g] = None  # nothing to fit on: entries of both kinds are needed
            continue
        models[g] = LexicalJudge(fit_weights([r[0] for r in train], [r[1] for r in train]))
    return models


def _score(
    prepared: list[Prepared],
    pick: Callable[[str], Any],
    policy: str,
    config: Config,
    feats: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[JudgeOutput]]:
    entries: list[dict[str, Any]] = []
    by_case = []
    outs = []
    for p in prepared:
        case = p.case
        j = pick(case.id)
        out = j.judge(p.request, feats[case.id]) if feats is not None else j.judge(p.request)
        outs.append(out)
        decided = decisions(p, out, config)
        rows = []
        for lab, entry in zip(case.labels, match_labels(p.parsed, case.labels), strict=True):
            if entry is None:
                continue
            got = decided[entry.id]
            rows.append(
                {
                    "case": case.id,
                    "project": case.project,
                    "set": case.origin,
                    "section": lab.section,
                    "entry": lab.entry,
                    "supported": supported(lab, policy),
                    "source": lab.source,
                    "score": got.score,
                    "decision": got.decision,
                    "doubtful": got.decision == "keep" and (got.reason or "").startswith(DOUBTFUL),
                    "reason": got.reason,
                }
            )
        entries += rows
        guarded = any(e.reason and "max_prune_share guard" in e.reason for e in decided.values())
        by_case.append(
            {"case": case.id, "project": case.project, "origin": case.origin, "guarded": guarded, **metrics(rows, 1)}
        )
    return entries, by_case, outs


def _labelled_rows(p: Prepared, policy: str, feats: Any = None) -> list[tuple[list[float], bool]]:
    from sjc_mcp.judges.lexical import FEATURES, LexicalJudge

    feats = feats if feats is not None else LexicalJudge().features(p.request)
    by_id = {e.id: [f[k] for k in FEATURES] for e, (f, _) in zip(p.request.entries, feats, strict=True)}
    out = []
    for lab, entry in zip(p.case.labels, match_labels(p.parsed, p.case.labels), strict=True):
        if entry is not None:
            out.append((by_id[entry.id], supported(lab, policy)))
    return out


def calibrate(paths: Sequence[str], config: Config, policy: str = "sjc") -> dict[str, Any]:
    """Fit the lexical judge's weights on every labelled entry of the cases; returns the weights file."""
    from sjc_mcp.judges.lexical import fit_weights

    if policy == "paper":
        config = config.replace(sources=[s for s in config.sources if s != "user_message"])
    rows: list[tuple[list[float], bool]] = []
    ids = []
    for path in case_paths(paths):
        case = load_case(path)
        if is_slice(case):
            continue
        rows += _labelled_rows(prepare(case, config), policy)
        ids.append(case.id)
    if not rows or all(y for _, y in rows) or not any(y for _, y in rows):
        from sjc_mcp.errors import InputError

        raise InputError("calibration needs labelled entries of both kinds (supported and not)")
    weights = fit_weights([r for r, _ in rows], [y for _, y in rows])
    return weights.to_json(fitted_on=sorted(ids), entries=len(rows), policy=policy)
