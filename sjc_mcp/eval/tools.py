"""``sjc eval --mode tools``: what tool-result pruning costs, measured with the product's own rules.

On recorded transcripts, the identifiers (paths, names, hashes, numbers with units) the agent used
after each compaction that appeared before it only in tool results: what share of them the pruned
history still holds, against the share of tool-result tokens pruning removed. Each boundary's span is
pruned by ``relevance.run`` exactly as the product runs it (supersession, relevance, the
``min_reduction`` floor), for supersession alone, relevance alone and both, and for relevance as
``truncate_below`` moves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sjc_mcp.config import Config
from sjc_mcp.hosts.base import Item
from sjc_mcp.text import estimate_tokens

MODES = ("supersession", "relevance", "both")


def _mode_config(config: Config, mode: str, truncate_below: float | None = None) -> Config:
    tools = config.tools
    update: dict[str, Any] = {"supersede": mode != "relevance"}
    if mode == "supersession":  # no relevance cut: thresholds nothing scores under
        update.update(drop_below=0.0, truncate_below=0.0)
    elif truncate_below is not None:
        update.update(truncate_below=truncate_below)
    return config.replace(mode="enforce", tools=dataclasses.replace(tools, **update))


def _tool_tokens(items: Sequence[Item]) -> int:
    return sum(estimate_tokens(it.content) for it in items if it.role == "tool_output")


def _cases(paths: Sequence[str]) -> list[dict[str, Any]]:
    from sjc_mcp.audit.replay import transcript_files
    from sjc_mcp.errors import SJCError
    from sjc_mcp.hosts import boundary_count, claude_code, read_boundary
    from sjc_mcp.judges.lexical import anchors, found

    cases = []
    for f in transcript_files(paths):
        try:
            n = boundary_count(f)
        except SJCError:
            continue
        for i in range(n):
            try:
                span = read_boundary(f, i).span
                after = read_boundary(f, i + 1).span if i + 1 < n else claude_code.read_open_span(f).span
            except SJCError:
                continue
            own = "\n".join(it.content for it in span if it.role != "tool_output")
            tools_text = "\n".join(it.content for it in span if it.role == "tool_output")
            used_text = "\n".join(it.content for it in after if it.role in ("assistant", "tool_call"))
            ids = sorted(a for a in anchors(used_text) if len(a) >= 4 and found(a, tools_text) and not found(a, own))
            cases.append({"transcript": f.name, "boundary": i, "span": span, "ids": ids})
    return cases


def _measure(cases: list[dict[str, Any]], config: Config, judge: Any) -> dict[str, Any]:
    from sjc_mcp.judges.lexical import found
    from sjc_mcp.tools import relevance

    kept = total = before = after = 0
    rows = []
    for c in cases:
        res = relevance.run(c["span"], config=config, judge=judge, log=False)
        text = "\n".join(it.content for it in res.messages)
        k = sum(1 for a in c["ids"] if found(a, text))
        b, a = _tool_tokens(c["span"]), _tool_tokens(res.messages)
        kept, total, before, after = kept + k, total + len(c["ids"]), before + b, after + a
        rows.append(
            {
                "transcript": c["transcript"],
                "boundary": c["boundary"],
                "status": res.status,
                "superseded": res.superseded,
                "tool_tokens_before": b,
                "tool_tokens_after": a,
                "tool_tokens_dropped": round(1 - a / b, 4) if b else None,
                "identifiers": len(c["ids"]),
                "identifiers_found": k,
                "identifiers_kept": round(k / len(c["ids"]), 4) if c["ids"] else None,
            }
        )
    return {
        "identifiers": total,
        "identifiers_kept": round(kept / total, 4) if total else None,
        "tool_tokens_before": before,
        "tool_tokens_dropped": round(1 - after / before, 4) if before else None,
        "by_boundary": rows,
    }


# What tool pruning is held to: a quarter of the tool-result tokens gone, 98 % of the later-used identifiers kept.
TARGET_DROPPED = 0.25
TARGET_KEPT = 0.98


def _by_transcript(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, int, int]]:
    """Per transcript: tool tokens before and after, identifiers kept and in all, from per-boundary rows."""
    out: dict[str, tuple[int, int, int, int]] = {}
    for r in rows:
        ob, oa, ok, on = out.get(r["transcript"], (0, 0, 0, 0))
        out[r["transcript"]] = (
            ob + r["tool_tokens_before"],
            oa + r["tool_tokens_after"],
            ok + r["identifiers_found"],
            on + r["identifiers"],
        )
    return out


def held_out(per_threshold: dict[float, dict[str, tuple[int, int, int, int]]], halvings: int) -> dict[str, Any]:
    """The threshold chosen on a random half of the transcripts (the most dropped while keeping TARGET_KEPT of
    the identifiers there), measured on the other half; ``halvings`` times, seeded."""
    import random
    import statistics

    def score(names: list[str], t: float) -> tuple[float, float]:
        rows = [per_threshold[t][n] for n in names]
        before, after = sum(r[0] for r in rows), sum(r[1] for r in rows)
        kept, total = sum(r[2] for r in rows), sum(r[3] for r in rows)
        return (1 - after / before if before else 0.0), (kept / total if total else 1.0)

    names = sorted(next(iter(per_threshold.values())))
    rng = random.Random(0)
    runs = []
    for _ in range(halvings):
        rng.shuffle(names)
        a, b = names[: len(names) // 2], names[len(names) // 2 :]
        fit = [t for t in per_threshold if score(a, t)[1] >= TARGET_KEPT]
        t = max(fit, key=lambda x: score(a, x)[0]) if fit else min(per_threshold)
        runs.append((t, *score(b, t)))
    kept = sorted(r[2] for r in runs)
    return {
        "halvings": halvings,
        "dropped_median": round(statistics.median(r[1] for r in runs), 4),
        "kept_median": round(statistics.median(kept), 4),
        "kept_worst_tenth": round(kept[len(kept) // 10], 4),
        "met_both": round(sum(1 for r in runs if r[1] >= TARGET_DROPPED and r[2] >= TARGET_KEPT) / len(runs), 4),
        "chosen": {str(t): sum(1 for r in runs if r[0] == t) for t in sorted(per_threshold)},
    }


def identifier_retention(
    paths: Sequence[str],
    config: Config,
    thresholds: Sequence[float] = (0.15, 0.2, 0.25, 0.3, 0.35, 0.45),
    halvings: int = 0,
) -> dict[str, Any]:
    from sjc_mcp.judges import make_judge

    judge = make_judge(config)
    cases = _cases(paths)
    modes = {m: _measure(cases, _mode_config(config, m), judge) for m in MODES}
    sweep = []
    per_threshold = {}
    for t in thresholds:
        row = _measure(cases, _mode_config(config, "both", t), judge)
        per_threshold[t] = _by_transcript(row["by_boundary"])
        sweep.append({"truncate_below": t, **{k: v for k, v in row.items() if k != "by_boundary"}})
    extra = (
        {"held_out": held_out(per_threshold, halvings)}
        if halvings > 0 and len(per_threshold[thresholds[0]]) > 1
        else {}
    )
    return {
        **extra,
        "transcripts": len({c["transcript"] for c in cases}),
        "boundaries": len(cases),
        "judge": judge.name,
        "tokens_estimated": True,
        "defaults": {
            "truncate_below": config.tools.truncate_below,
            "drop_below": config.tools.drop_below,
            "min_reduction": config.tools.min_reduction,
            "keep_recent_turns": config.tools.keep_recent_turns,
        },
        "modes": modes,
        "by_threshold": sweep,
    }


def render_text(out: dict[str, Any]) -> str:
    d = out["defaults"]
    lines = [
        f"tool-result pruning ({out['judge']} judge) on {out['boundaries']} compactions of {out['transcripts']} "
        f"transcripts; identifiers = those used after a compaction that appeared before it only in tool results; "
        f"tokens estimated",
        f"defaults: truncate below {d['truncate_below']}, drop below {d['drop_below']}, "
        f"floor {d['min_reduction']:.0%}, {d['keep_recent_turns']} recent turns protected",
    ]
    for m, r in out["modes"].items():
        kept = "n/a" if r["identifiers_kept"] is None else f"{r['identifiers_kept']:.1%}"
        lines.append(
            f"  {m:<13} tool-result tokens dropped {r['tool_tokens_dropped'] or 0:.1%}, "
            f"identifiers kept {kept} of {r['identifiers']}"
        )
    lines.append("per boundary (both):")
    for row in out["modes"]["both"]["by_boundary"]:
        kept = "n/a" if row["identifiers_kept"] is None else f"{row['identifiers_kept']:.1%}"
        lines.append(
            f"  {row['transcript']}#{row['boundary']}: {row['status']}, superseded {row['superseded']}, "
            f"dropped {row['tool_tokens_dropped'] or 0:.1%} of {row['tool_tokens_before']:,} tokens, "
            f"identifiers kept {kept} of {row['identifiers']}"
        )
    lines.append("relevance threshold (with supersession):")
    for row in out["by_threshold"]:
        kept = "n/a" if row["identifiers_kept"] is None else f"{row['identifiers_kept']:.1%}"
        lines.append(
            f"  truncate below {row['truncate_below']:.2f}: dropped {row['tool_tokens_dropped'] or 0:.1%}, kept {kept}"
        )
    h = out.get("held_out")
    if h:
        lines.append(
            f"held out ({h['halvings']} halvings: the threshold chosen on half the transcripts, measured on the "
            f"other half): dropped {h['dropped_median']:.1%} and kept {h['kept_median']:.1%} (medians), worst tenth "
            f"kept {h['kept_worst_tenth']:.1%}; both {TARGET_DROPPED:.0%} dropped and {TARGET_KEPT:.0%} kept in "
            f"{h['met_both']:.0%} of them"
        )
    return "\n".join(lines)
