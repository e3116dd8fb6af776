"""``sjc eval``: measure a judge on labelled provenance cases.

Reports AUROC of the score against ``supported`` overall and within the forward-looking sections
(pending tasks, next steps, current work, decisions, plans, task state: where invented entries live,
and the setting of the paper's figure), precision and recall of "kept" for supported entries at the
threshold, pruned share per section, a score histogram and the pruned fraction as the threshold
moves. ``policy="paper"`` does not count user messages as a source. ``loo=True`` scores each case
with lexical weights fitted on the other cases only (leave-one-case-out).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.eval.cases import Case, case_paths, load_case, match_labels
from sjc_mcp.judges.base import Judge
from sjc_mcp.metrics import auroc
from sjc_mcp.pipeline import build_request, decide
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


def case_request(case: Case, config: Config):
    b = case.boundary
    parsed = split_summary(b.summary, None if case.host == "generic" else case.host)
    request = build_request(
        parsed,
        b.sources(),
        config,
        task=b.task,
        previous_summary=b.previous_summary,
        retained=b.retained_turns(),
        assistant_prose=b.assistant_prose(),
    )
    return parsed, request


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
    progress: bool = True,
) -> dict[str, Any]:
    """Score every labelled entry and summarise. With ``loo``, each case is scored by lexical weights
    fitted on the other cases, and ``group_out`` adds two harder splits: leave one set out (fit on the
    real cases, score the synthetic ones, and the other way round: a kind of session never seen) and
    leave one session out (both boundaries of a session go out together)."""
    from sjc_mcp.judges import make_judge

    if policy == "paper":
        config = config.replace(sources=[s for s in config.sources if s != "user_message"])
    cases = [load_case(p) for p in case_paths(paths)]
    judge = judge or make_judge(config)
    bar = _Progress(len(cases), progress)
    prepared = []
    for case in cases:
        bar.step(case.id)
        parsed, request = case_request(case, config)
        prepared.append((case, parsed, request))
    bar.close()
    meta = {
        "cases": len(cases),
        "labelled": sum(len(c.labels) for c in cases),
        "threshold": config.threshold,
        "margin": config.margin,
        "policy": policy,
    }
    if not loo:
        entries, by_case = _score(prepared, lambda _: judge, policy, config)
        return summarise(entries, by_case, judge=judge.name, **meta)
    from sjc_mcp.judges.lexical import LexicalJudge

    lexical = LexicalJudge()
    feats = {case.id: lexical.features(request) for case, _, request in prepared}
    rows = {c.id: _labelled_rows(c, parsed, request, policy, feats[c.id]) for c, parsed, request in prepared}
    splits = {
        "case": {c.id: c.id for c, _, _ in prepared},
        "set": {c.id: c.origin for c, _, _ in prepared},
        "session": {c.id: _session(c) for c, _, _ in prepared},
    }
    reports = {}
    for name, group in splits.items():
        models = _fit_out(rows, group)
        entries, by_case = _score(prepared, lambda cid, m=models, g=group: m[g[cid]], policy, config, feats)
        reports[name] = summarise(entries, by_case, judge=f"{judge.name} (leave-one-{name}-out)", **meta)
    report = reports["case"]
    report["group_out"] = {
        name: {"overall": _metrics(r["entries"]), **{k: v for k, v in r["by_set"].items()}}
        for name, r in reports.items()
        if name != "case"
    }
    return report


def _session(case: Case) -> str:
    """Cases from one transcript (its first and second compaction) are one session."""
    return case.boundary.session_id or case.id


def _fit_out(rows: dict[str, list[tuple[list[float], bool]]], group: dict[str, str]) -> dict[str, Any]:
    """For each group, lexical weights fitted on the cases of every other group."""
    from sjc_mcp.judges.lexical import LexicalJudge, fit_weights

    models = {}
    for g in sorted(set(group.values())):
        train = [r for cid, rs in rows.items() if group[cid] != g for r in rs]
        models[g] = LexicalJudge(fit_weights([r[0] for r in train], [r[1] for r in train]))
    return models


def _score(prepared, pick, policy: str, config: Config, feats: dict[str, Any] | None = None):
    entries: list[dict[str, Any]] = []
    by_case = []
    th, mg = config.threshold, config.margin
    for case, parsed, request in prepared:
        j = pick(case.id)
        out = j.judge(request, feats[case.id]) if feats is not None else j.judge(request)
        scores = {x.entry_id: x for x in out.judgments}
        rows = []
        for lab, entry in zip(case.labels, match_labels(parsed, case.labels), strict=True):
            if entry is None:
                continue
            got = scores.get(entry.id)
            score = got.score if got else None
            decision, _ = decide(score, th, mg)
            rows.append(
                {
                    "case": case.id,
                    "set": case.origin,
                    "section": lab.section,
                    "entry": lab.entry,
                    "supported": _supported(lab, policy),
                    "source": lab.source,
                    "score": score,
                    "decision": decision,
                    "reason": got.reason if got else None,
                }
            )
        entries += rows
        scored = [r for r in rows if r["score"] is not None]
        by_case.append(
            {
                "case": case.id,
                "origin": case.origin,
                "entries": len(rows),
                "auroc": auroc([r["score"] for r in scored], [r["supported"] for r in scored]),
                "pruned": sum(r["decision"] == "prune" for r in rows),
            }
        )
    return entries, by_case


def _labelled_rows(case: Case, parsed, request, policy: str, feats=None) -> list[tuple[list[float], bool]]:
    from sjc_mcp.judges.lexical import FEATURES, LexicalJudge

    feats = feats if feats is not None else LexicalJudge().features(request)
    by_id = {e.id: [f[k] for k in FEATURES] for e, (f, _) in zip(request.entries, feats, strict=True)}
    out = []
    for lab, entry in zip(case.labels, match_labels(parsed, case.labels), strict=True):
        if entry is not None:
            out.append((by_id[entry.id], _supported(lab, policy)))
    return out


def _metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """AUROC overall and in forward-looking sections; precision and recall of "kept"; unsupported removed."""
    scored = [r for r in rows if r["score"] is not None]
    fwd = [r for r in scored if is_forward(r["section"])]
    kept = [r for r in rows if r["decision"] != "prune"]
    sup = [r for r in rows if r["supported"]]
    uns = [r for r in rows if not r["supported"]]

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    def roc(rs: list[dict[str, Any]]) -> float | None:
        a = auroc([r["score"] for r in rs], [r["supported"] for r in rs])
        return None if a is None else round(a, 4)

    return {
        "entries": len(rows),
        "auroc": roc(scored),
        "auroc_forward": roc(fwd),
        "forward_entries": len(fwd),
        "precision_supported": ratio(sum(r["supported"] for r in kept), len(kept)),
        "recall_supported": ratio(sum(r["decision"] != "prune" for r in sup), len(sup)),
        "unsupported_removed": ratio(sum(r["decision"] == "prune" for r in uns), len(uns)),
        "unsupported": len(uns),
    }


def summarise(entries: list[dict[str, Any]], by_case: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    mg = meta["margin"]
    scored = [r for r in entries if r["score"] is not None]
    overall = _metrics(entries)
    by_section: dict[str, dict[str, Any]] = {}
    for name in sorted({r["section"] for r in entries}):
        rows = [r for r in entries if r["section"] == name]
        m = _metrics(rows)
        by_section[name] = {
            "entries": len(rows),
            "pruned": sum(r["decision"] == "prune" for r in rows),
            "supported": sum(r["supported"] for r in rows),
            "pruned_share": round(sum(r["decision"] == "prune" for r in rows) / len(rows), 3),
            "auroc": m["auroc"],
            "forward": is_forward(name),
        }
    by_set = {
        s: _metrics([r for r in entries if r.get("set") == s]) for s in sorted({r.get("set") for r in entries}, key=str)
    }
    hist = [0] * 10
    for r in scored:
        hist[min(9, int(r["score"] * 10))] += 1
    curve = []
    for i in range(1, 10):
        t = i / 10
        pruned = sum(decide(r["score"], t, mg)[0] == "prune" for r in entries)
        curve.append({"threshold": t, "pruned_fraction": round(pruned / max(1, len(entries)), 3)})
    return {
        "cases": meta["cases"],
        "entries_labelled": meta["labelled"],
        "entries_matched": len(entries),
        "judge": meta["judge"],
        "policy": meta["policy"],
        "auroc": overall["auroc"],
        "auroc_reasoning": overall["auroc_forward"],
        "reasoning_entries": overall["forward_entries"],
        "precision_supported": overall["precision_supported"],
        "recall_supported": overall["recall_supported"],
        "unsupported_removed": overall["unsupported_removed"],
        "threshold": meta["threshold"],
        "margin": mg,
        "histogram": hist,
        "pruned_by_threshold": curve,
        "by_set": by_set,
        "by_case": by_case,
        "by_section": by_section,
        "entries": entries,
    }


def _row(name: str, m: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:.3f}"

    return (
        f"  {name[:26]:26} {m['entries']:5} {f(m['auroc'])}  {f(m['auroc_forward'])} ({m['forward_entries']:3})  "
        f"{f(m['precision_supported'])}  {f(m['recall_supported'])}  {f(m['unsupported_removed'])}"
    )


_HEAD = "  {:26} {:>5} {:>5}  {:>11}  {:>5}  {:>5}  {:>5}".format(
    "", "n", "AUROC", "forward (n)", "prec", "recall", "unsup removed"
)


def render_text(report: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:.3f}"

    lines = [
        f"judge {report['judge']}, policy {report['policy']}, threshold {report['threshold']} "
        f"(margin {report['margin']})",
        f"cases {report['cases']}, labelled entries {report['entries_labelled']}, matched {report['entries_matched']}",
        f"AUROC overall                 {f(report['auroc'])}",
        f"AUROC forward-looking sections {f(report['auroc_reasoning'])}  ({report['reasoning_entries']} entries)",
        f"kept entries that are supported (precision) {f(report['precision_supported'])}",
        f"supported entries kept (recall)             {f(report['recall_supported'])}",
        f"unsupported entries removed                 {f(report['unsupported_removed'])}",
        "",
        "per set (prec = kept entries that are supported, recall = supported entries kept):",
        _HEAD,
    ]
    lines += [_row(name, m) for name, m in report["by_set"].items()]
    for split, parts in report.get("group_out", {}).items():
        what = "fitted on the other set" if split == "set" else "fitted on the other sessions"
        lines += ["", f"leave one {split} out ({what}):", _HEAD]
        lines += [_row(name, m) for name, m in parts.items()]
    lines += ["", "per case:"]
    for c in report["by_case"]:
        lines.append(
            f"  {c['case']:24} {c['origin']:9} entries {c['entries']:3}  pruned {c['pruned']:3}  AUROC {f(c['auroc'])}"
        )
    lines += ["", "per section (* forward-looking): pruned/entries, supported, AUROC"]
    for name, s in sorted(report["by_section"].items(), key=lambda kv: -kv[1]["entries"]):
        mark = "*" if s["forward"] else " "
        lines.append(
            f" {mark}{name[:34]:34} {s['pruned']:3}/{s['entries']:<3} ({s['pruned_share']:.0%}), "
            f"supported {s['supported']:3}  AUROC {f(s['auroc'])}"
        )
    lines += [
        "",
        "score histogram (0.0-1.0 in tenths): " + " ".join(str(h) for h in report["histogram"]),
        "pruned fraction by threshold: "
        + ", ".join(f"{c['threshold']:.1f}:{c['pruned_fraction']:.2f}" for c in report["pruned_by_threshold"]),
    ]
    return "\n".join(lines)


def calibrate(paths: Sequence[str], config: Config, policy: str = "sjc") -> dict[str, Any]:
    """Fit the lexical judge's weights on every labelled entry of the cases; returns the weights file."""
    from sjc_mcp.judges.lexical import fit_weights

    if policy == "paper":
        config = config.replace(sources=[s for s in config.sources if s != "user_message"])
    rows: list[tuple[list[float], bool]] = []
    ids = []
    for p in case_paths(paths):
        case = load_case(p)
        parsed, request = case_request(case, config)
        rows += _labelled_rows(case, parsed, request, policy)
        ids.append(case.id)
    if not rows or all(y for _, y in rows) or not any(y for _, y in rows):
        from sjc_mcp.errors import InputError

        raise InputError("calibration needs labelled entries of both kinds (supported and not)")
    weights = fit_weights([r for r, _ in rows], [y for _, y in rows])
    return weights.to_json(fitted_on=sorted(ids), entries=len(rows), policy=policy)
