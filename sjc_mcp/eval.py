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

from sjc_mcp.cases import Case, case_paths, load_case, match_labels
from sjc_mcp.config import Config
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
    from sjc_mcp.judges import make_judge

    if policy == "paper":
        config = config.model_copy(update={"sources": [s for s in config.sources if s != "user_message"]})
    cases = [load_case(p) for p in case_paths(paths)]
    judge = judge or make_judge(config)
    bar = _Progress(len(cases), progress)
    prepared = []
    for case in cases:
        parsed, request = case_request(case, config)
        prepared.append((case, parsed, request))
    models: dict[str, Any] = {}
    if loo:
        from sjc_mcp.judges.lexical import LexicalJudge, fit_weights

        feats = {case.id: _labelled_rows(case, parsed, request, policy) for case, parsed, request in prepared}
        for case, _, _ in prepared:
            rows = [r for cid, rs in feats.items() if cid != case.id for r in rs]
            models[case.id] = LexicalJudge(fit_weights([r[0] for r in rows], [r[1] for r in rows]))
    entries: list[dict[str, Any]] = []
    by_case = []
    labelled = matched = 0
    th, mg = config.threshold, config.margin
    for case, parsed, request in prepared:
        bar.step(case.id)
        j = models.get(case.id, judge)
        out = j.judge(request)
        scores = {x.entry_id: x.score for x in out.judgments}
        hits = match_labels(parsed, case.labels)
        labelled += len(case.labels)
        rows = []
        for lab, entry in zip(case.labels, hits, strict=True):
            if entry is None:
                continue
            matched += 1
            score = scores.get(entry.id)
            decision, _ = decide(score, th, mg)
            rows.append(
                {
                    "case": case.id,
                    "section": lab.section,
                    "entry": lab.entry,
                    "supported": _supported(lab, policy),
                    "source": lab.source,
                    "score": score,
                    "decision": decision,
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
    bar.close()
    return summarise(
        entries,
        by_case,
        cases=len(cases),
        labelled=labelled,
        matched=matched,
        threshold=th,
        margin=mg,
        judge=f"{judge.name}{' (leave-one-case-out)' if loo else ''}",
        policy=policy,
    )


def _labelled_rows(case: Case, parsed, request, policy: str) -> list[tuple[list[float], bool]]:
    from sjc_mcp.judges.lexical import LexicalJudge

    feats = LexicalJudge().feature_vectors(request)
    by_id = {e.id: f for e, f in zip(request.entries, feats, strict=True)}
    out = []
    for lab, entry in zip(case.labels, match_labels(parsed, case.labels), strict=True):
        if entry is not None:
            out.append((by_id[entry.id], _supported(lab, policy)))
    return out


def summarise(entries: list[dict[str, Any]], by_case: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    th, mg = meta["threshold"], meta["margin"]
    scored = [r for r in entries if r["score"] is not None]
    fwd = [r for r in scored if is_forward(r["section"])]
    kept = [r for r in entries if r["decision"] != "prune"]
    sup = [r for r in entries if r["supported"]]
    by_section: dict[str, dict[str, Any]] = {}
    for r in entries:
        s = by_section.setdefault(r["section"], {"entries": 0, "pruned": 0, "supported": 0})
        s["entries"] += 1
        s["pruned"] += r["decision"] == "prune"
        s["supported"] += r["supported"]
    for s in by_section.values():
        s["pruned_share"] = round(s["pruned"] / s["entries"], 3)
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
        "entries_matched": meta["matched"],
        "judge": meta["judge"],
        "policy": meta["policy"],
        "auroc": auroc([r["score"] for r in scored], [r["supported"] for r in scored]),
        "auroc_reasoning": auroc([r["score"] for r in fwd], [r["supported"] for r in fwd]),
        "reasoning_entries": len(fwd),
        "precision_supported": round(sum(r["supported"] for r in kept) / len(kept), 4) if kept else None,
        "recall_supported": round(sum(r["decision"] != "prune" for r in sup) / len(sup), 4) if sup else None,
        "threshold": th,
        "margin": mg,
        "histogram": hist,
        "pruned_by_threshold": curve,
        "by_case": by_case,
        "by_section": by_section,
        "entries": entries,
    }


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
        "",
        "per case:",
    ]
    for c in report["by_case"]:
        lines.append(
            f"  {c['case']:24} {c['origin']:9} entries {c['entries']:3}  pruned {c['pruned']:3}  AUROC {f(c['auroc'])}"
        )
    lines += ["", "pruned share per section:"]
    for name, s in sorted(report["by_section"].items(), key=lambda kv: -kv[1]["entries"]):
        lines.append(
            f"  {name[:34]:34} {s['pruned']:3}/{s['entries']:<3} ({s['pruned_share']:.0%}), supported {s['supported']}"
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
        config = config.model_copy(update={"sources": [s for s in config.sources if s != "user_message"]})
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
