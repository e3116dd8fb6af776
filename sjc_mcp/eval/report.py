"""What ``sjc eval`` reports: the figures of a set of judged entries (prune precision, true entries lost
per compaction, unsupported removed, AUROC overall and in the forward-looking sections), overall, per set,
per section and per case, the decision as the threshold moves, and the report as text."""

from __future__ import annotations

from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.eval.cases import match_labels
from sjc_mcp.eval.prepared import Prepared, decisions, supported
from sjc_mcp.metrics import auroc
from sjc_mcp.models import JudgeOutput
from sjc_mcp.text import is_forward_section


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def metrics(rows: list[dict[str, Any]], compactions: int) -> dict[str, Any]:
    """What a user experiences (prune precision, true entries lost per compaction, unsupported removed),
    AUROC overall and in forward-looking sections, precision and recall of "kept"."""
    scored = [r for r in rows if r["score"] is not None]
    fwd = [r for r in scored if is_forward_section(r["section"])]
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
    overall = metrics(entries, n)
    by_section: dict[str, dict[str, Any]] = {}
    for name in sorted({r["section"] for r in entries}):
        rows = [r for r in entries if r["section"] == name]
        by_section[name] = {
            **metrics(rows, n),
            "supported": sum(r["supported"] for r in rows),
            "pruned_share": round(sum(r["decision"] == "prune" for r in rows) / len(rows), 3),
            "forward": is_forward_section(name),
        }
    sets = sorted({r["set"] for r in entries})
    by_set = {s: metrics([r for r in entries if r["set"] == s], sum(c["origin"] == s for c in by_case)) for s in sets}
    hist = [0] * 10
    for r in entries:
        if r["score"] is not None:
            hist[min(9, int(r["score"] * 10))] += 1
    curve = _curve(prepared, outs, config, meta["policy"], n)
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


def _curve(
    prepared: list[Prepared], outs: list[JudgeOutput], config: Config, policy: str, n: int
) -> list[dict[str, Any]]:
    """The decision at each threshold of ``CURVE``: deleted, prune precision, true entries lost per
    compaction (``n`` compactions), unsupported removed."""
    curve = []
    labelled = [
        {
            e.id: supported(lab, policy)
            for lab, e in zip(p.case.labels, match_labels(p.parsed, p.case.labels), strict=True)
            if e
        }
        for p in prepared
    ]
    for t in CURVE:
        deleted = lost = uns = 0
        for p, out, lab in zip(prepared, outs, labelled, strict=True):
            for eid, e in decisions(p, out, config, t).items():
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
    return curve


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
