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
else its id). A case under a ``slices`` folder is scored but never fitted on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.errors import InputError
from sjc_mcp.eval.cases import Case, case_paths, load_case, match_labels
from sjc_mcp.judges.base import Judge
from sjc_mcp.metrics import auroc
from sjc_mcp.models import DOUBTFUL, JudgeOutput, JudgeRequest, ParsedSummary, Source
from sjc_mcp.pipeline import build_request, decide_entries
from sjc_mcp.summary import split_summary
from sjc_mcp.text import is_forward_section

is_forward = is_forward_section


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


@dataclass(slots=True)
class Prepared:
    """One case made ready to judge: its summary split, its request, the sources the decision reads."""

    case: Case
    parsed: ParsedSummary
    request: JudgeRequest
    sources: list[Source]


def case_request(case: Case, config: Config) -> tuple[ParsedSummary, JudgeRequest]:
    p = prepare(case, config)
    return p.parsed, p.request


def prepare(case: Case, config: Config) -> Prepared:
    b = case.boundary
    parsed = split_summary(b.summary, None if case.host == "generic" else case.host)
    sources = b.sources()
    request = build_request(
        parsed,
        sources,
        config,
        task=b.task,
        previous_summary=b.previous_summary,
        retained=b.retained_turns(),
        assistant_prose=b.assistant_prose(),
    )
    return Prepared(case, parsed, request, sources)


def _supported(label: Any, policy: str) -> bool:
    if policy == "paper" and label.source == "user_message":
        return False
    return bool(label.supported)


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


def _decisions(p: Prepared, out: JudgeOutput, config: Config, threshold: float | None = None) -> dict[int, Any]:
    """The product's decision for every entry of the case (``pipeline.decide_entries``), by entry id."""
    entries, _, _ = decide_entries(
        p.parsed,
        out,
        p.sources,
        threshold=config.threshold if threshold is None else threshold,
        margin=config.margin,
        max_prune_share=config.max_prune_share,
        incomplete=p.case.boundary.incomplete,
    )
    return {e.id: e for e in entries}


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
        decided = _decisions(p, out, config)
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
                    "supported": _supported(lab, policy),
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
            {"case": case.id, "project": case.project, "origin": case.origin, "guarded": guarded, **_metrics(rows, 1)}
        )
    return entries, by_case, outs


def _labelled_rows(p: Prepared, policy: str, feats: Any = None) -> list[tuple[list[float], bool]]:
    from sjc_mcp.judges.lexical import FEATURES, LexicalJudge

    feats = feats if feats is not None else LexicalJudge().features(p.request)
    by_id = {e.id: [f[k] for k in FEATURES] for e, (f, _) in zip(p.request.entries, feats, strict=True)}
    out = []
    for lab, entry in zip(p.case.labels, match_labels(p.parsed, p.case.labels), strict=True):
        if entry is not None:
            out.append((by_id[entry.id], _supported(lab, policy)))
    return out


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def _metrics(rows: list[dict[str, Any]], compactions: int) -> dict[str, Any]:
    """What a user experiences (prune precision, true entries lost per compaction, unsupported removed),
    AUROC overall and in forward-looking sections, precision and recall of "kept"."""
    scored = [r for r in rows if r["score"] is not None]
    fwd = [r for r in scored if is_forward(r["section"])]
    deleted = [r for r in rows if r["decision"] == "prune"]
    kept = [r for r in rows if r["decision"] != "prune"]
    sup = [r for r in rows if r["supported"]]
    uns = [r for r in rows if not r["supported"]]
    lost = sum(r["supported"] for r in deleted)

    def roc(rs: list[dict[str, Any]]) -> float | None:
        a = auroc([r["score"] for r in rs], [r["supported"] for r in rs])
        return None if a is None else round(a, 4)

    return {
        "entries": len(rows),
        "compactions": compactions,
        "deleted": len(deleted),
        "true_deleted": lost,
        "prune_precision": _ratio(len(deleted) - lost, len(deleted)),
        "true_lost_per_compaction": _ratio(lost, compactions),
        "unsupported": len(uns),
        "unsupported_removed": _ratio(len(deleted) - lost, len(uns)),
        "doubtful": sum(bool(r.get("doubtful")) for r in rows),
        "auroc": roc(scored),
        "auroc_forward": roc(fwd),
        "forward_entries": len(fwd),
        "precision_supported": _ratio(sum(r["supported"] for r in kept), len(kept)),
        "recall_supported": _ratio(len(sup) - lost, len(sup)),
    }


# the thresholds the decision is shown at, besides the configured one
CURVE = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def summarise(
    entries: list[dict[str, Any]],
    by_case: list[dict[str, Any]],
    outs: list[JudgeOutput],
    prepared: list[Prepared],
    config: Config,
    **meta: Any,
) -> dict[str, Any]:
    n = len(by_case)
    overall = _metrics(entries, n)
    by_section: dict[str, dict[str, Any]] = {}
    for name in sorted({r["section"] for r in entries}):
        rows = [r for r in entries if r["section"] == name]
        by_section[name] = {
            **_metrics(rows, n),
            "supported": sum(r["supported"] for r in rows),
            "pruned_share": round(sum(r["decision"] == "prune" for r in rows) / len(rows), 3),
            "forward": is_forward(name),
        }
    sets = sorted({r["set"] for r in entries})
    by_set = {s: _metrics([r for r in entries if r["set"] == s], sum(c["origin"] == s for c in by_case)) for s in sets}
    hist = [0] * 10
    for r in entries:
        if r["score"] is not None:
            hist[min(9, int(r["score"] * 10))] += 1
    curve = []
    labelled = [
        {
            e.id: _supported(lab, meta["policy"])
            for lab, e in zip(p.case.labels, match_labels(p.parsed, p.case.labels), strict=True)
            if e
        }
        for p in prepared
    ]
    for t in CURVE:
        deleted = lost = uns = 0
        for p, out, lab in zip(prepared, outs, labelled, strict=True):
            for eid, e in _decisions(p, out, config, t).items():
                if eid in lab and e.decision == "prune":
                    deleted += 1
                    lost += lab[eid]
            uns += sum(not v for v in lab.values())
        curve.append(
            {
                "threshold": t,
                "deleted": deleted,
                "prune_precision": _ratio(deleted - lost, deleted),
                "true_lost_per_compaction": _ratio(lost, n),
                "unsupported_removed": _ratio(deleted - lost, uns),
            }
        )
    return {
        "cases": meta["cases"],
        "projects": meta["projects"],
        "entries_labelled": meta["labelled"],
        "entries_matched": len(entries),
        "judge": meta["judge"],
        "policy": meta["policy"],
        "threshold": meta["threshold"],
        "margin": meta["margin"],
        "max_prune_share": meta["max_prune_share"],
        "prune_precision": overall["prune_precision"],
        "true_lost_per_compaction": overall["true_lost_per_compaction"],
        "unsupported_removed": overall["unsupported_removed"],
        "auroc": overall["auroc"],
        "auroc_reasoning": overall["auroc_forward"],
        "reasoning_entries": overall["forward_entries"],
        "precision_supported": overall["precision_supported"],
        "recall_supported": overall["recall_supported"],
        "overall": overall,
        "histogram": hist,
        "by_threshold": curve,
        "by_set": by_set,
        "by_case": by_case,
        "by_section": by_section,
        "entries": entries,
    }


def _f(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "  n/a" if not pct else "   n/a"
    return f"{x:6.1%}" if pct else f"{x:.3f}"


_HEAD = "  {:28} {:>5} {:>4} {:>7} {:>5} {:>7}   {:>5} {:>5}".format(
    "", "n", "del", "prec", "lost", "unsup", "AUROC", "fwd"
)


def _row(name: str, m: dict[str, Any]) -> str:
    lost = m["true_lost_per_compaction"]
    return (
        f"  {name[:28]:28} {m['entries']:5} {m['deleted']:4} {_f(m['prune_precision'], True)} "
        f"{'  n/a' if lost is None else f'{lost:5.2f}'} {_f(m['unsupported_removed'], True)}   "
        f"{_f(m['auroc'])} {_f(m['auroc_forward'])}"
    )


def render_text(report: dict[str, Any]) -> str:
    o = report["overall"]
    lines = [
        f"judge {report['judge']}, policy {report['policy']}, threshold {report['threshold']} "
        f"(margin {report['margin']}, max_prune_share {report['max_prune_share']})",
        f"cases {report['cases']} from {report['projects']} projects, labelled entries {report['entries_labelled']}, "
        f"matched {report['entries_matched']}",
        "",
        "what a user sees (the decision sjc prune makes):",
        f"  deleted entries                       {o['deleted']}",
        f"  deleted that are unsupported (prune precision)   {_f(o['prune_precision'], True)}",
        f"  true entries lost per compaction      {o['true_lost_per_compaction'] or 0:.2f}  "
        f"({o['true_deleted']} in {o['compactions']} compactions)",
        f"  unsupported entries removed           {_f(o['unsupported_removed'], True)}  (of {o['unsupported']})",
        f"  kept as doubtful (below the cut, but no grounds a person could check)  {o['doubtful']}",
        f"AUROC overall                  {_f(report['auroc'])}",
        f"AUROC forward-looking sections {_f(report['auroc_reasoning'])}  ({report['reasoning_entries']} entries)",
        f"kept entries that are supported {_f(report['precision_supported'])}, supported entries kept "
        f"{_f(report['recall_supported'])}",
        "",
        "del = deleted, prec = deleted that are unsupported, lost = true entries deleted per compaction,",
        "unsup = unsupported entries removed, fwd = AUROC in forward-looking sections",
        "",
        "per set:",
        _HEAD,
    ]
    lines += [_row(name, m) for name, m in report["by_set"].items()]
    for split, why in report.get("group_out_skipped", {}).items():
        lines += ["", f"leave one {split} out: not measured ({why})"]
    for split, parts in report.get("group_out", {}).items():
        what = {
            "set": "fitted on the other set",
            "project": "fitted on the other projects",
            "case": "fitted on the other cases",
            "session": "fitted on the other sessions",
        }[split]
        lines += ["", f"leave one {split} out ({what}):", _HEAD]
        lines += [_row(name, m) for name, m in parts.items()]
    lines += ["", "per case:", _HEAD + "  project"]
    for c in report["by_case"]:
        mark = " (guard: kept whole)" if c["guarded"] else ""
        lines.append(_row(c["case"], c) + f"  {c['project'][:24]}{mark}")
    lines += ["", "per section (* forward-looking):", _HEAD]
    for name, s in sorted(report["by_section"].items(), key=lambda kv: -kv[1]["entries"]):
        lines.append(("*" if s["forward"] else " ") + _row(name, s)[1:])
    lines += [
        "",
        "score histogram (0.0-1.0 in tenths): " + " ".join(str(h) for h in report["histogram"]),
        "the decision by threshold (deleted, prune precision, true lost per compaction, unsupported removed):",
    ]
    for c in report["by_threshold"]:
        lost = c["true_lost_per_compaction"]
        lines.append(
            f"  {c['threshold']:.2f}  {c['deleted']:4}  {_f(c['prune_precision'], True)}  "
            f"{'n/a' if lost is None else f'{lost:.2f}'}  {_f(c['unsupported_removed'], True)}"
        )
    return "\n".join(lines)


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
