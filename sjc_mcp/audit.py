"""``sjc audit``: read the decision log back. What was pruned at each boundary and why, what it saved,
what went wrong, and whether the log itself is complete and unedited (``--verify``).

Reading is streaming and tolerant: a corrupt line is reported and skipped, never fatal.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sjc_mcp import log as decision_log
from sjc_mcp.errors import InputError

THRESHOLD_CLUSTER_SHARE = 0.15  # warn when more than this share of scores sit within the margin of the threshold


def _parse_since(since: str | None) -> str | None:
    if not since:
        return None
    try:
        dt = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--since wants a date like 2026-11-30 or 2026-11-30T14:00, got {since!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_log(path: Path, session: str | None = None, since: str | None = None) -> tuple[list[dict], list[str]]:
    """Records (filtered), and one message per corrupt line."""
    if not path.exists():
        raise InputError(f"no decision log at {path}")
    records, corrupt = [], []
    cutoff = _parse_since(since)
    for n, rec, raw in decision_log.read(path):
        if rec is None:
            corrupt.append(f"line {n}: corrupt, not a JSON record; skipped ({raw[:60]!r})")
            continue
        if session and rec.get("session") != session:
            continue
        if cutoff and str(rec.get("time", "")) < cutoff:
            continue
        rec["_line"] = n
        records.append(rec)
    return records, corrupt


def expected_models(config: Any) -> dict[str, str]:
    """The model id each judge's weights or threshold were calibrated for."""
    out: dict[str, str] = {}
    try:
        from sjc_mcp.judges.lexical import LexicalJudge

        weights_model = None
        if config is not None and config.lexical.weights:
            weights_model = json.loads(Path(config.lexical.weights).expanduser().read_text()).get("model")
        out["lexical"] = weights_model or LexicalJudge.model
    except (OSError, ValueError):
        pass
    if config is not None and getattr(config, "calibrated_model", None):
        out[config.judge] = config.calibrated_model
    return out


def summarise(records: list[dict], corrupt: list[str], config: Any = None) -> dict[str, Any]:
    boundaries: dict[tuple[str, str], dict[str, Any]] = {}
    totals = defaultdict(float)
    scores: list[float] = []
    margin_hits = 0
    warnings: list[str] = []
    models: dict[str, set[str]] = defaultdict(set)
    judge_errors = 0
    hook_failures = 0
    threshold = margin = None
    for rec in records:
        status = rec.get("status", "judged")
        bid = rec.get("boundary_id") if rec.get("boundary_id") is not None else rec.get("boundary")
        key = (str(rec.get("session") or rec.get("source") or "-"), "-" if bid is None else str(bid))
        b = boundaries.setdefault(
            key,
            {
                "session": key[0],
                "boundary": rec.get("boundary"),
                "boundary_id": rec.get("boundary_id"),
                "records": 0,
                "events": [],
            },
        )
        b["records"] += 1
        b["events"].append(rec.get("event") or rec.get("op"))
        totals["records"] += 1
        if rec.get("op") == "hook" and status in ("error", "timeout"):
            hook_failures += 1
        if rec.get("errors") and status == "judged":
            judge_errors += 1
        if rec.get("op") == "tools":  # relevance pruning of tool results
            b.setdefault("tools", []).append(
                {
                    "status": status,
                    "kept": rec.get("kept", 0),
                    "truncated": rec.get("truncated", 0),
                    "dropped": rec.get("dropped", 0),
                    "chars_before": rec.get("chars_before", 0),
                    "chars_after": rec.get("chars_after", 0),
                    "errors": rec.get("errors", []),
                    "judge": rec.get("judge"),
                }
            )
            totals["tool_chars_before"] += rec.get("chars_before", 0) or 0
            totals["tool_chars_after"] += rec.get("chars_after", 0) or 0
            continue
        if status != "judged":
            b.setdefault("statuses", []).append(status)
            if rec.get("errors"):
                b.setdefault("errors", []).extend(rec["errors"])
            continue
        judge = rec.get("judge") or {}
        models[str(judge.get("name"))].add(str(judge.get("model")))
        threshold, margin = rec.get("threshold", 0.5), rec.get("margin", 0.05)
        pruned = [e for e in rec.get("entries", []) if e.get("decision") == "prune"]
        for e in rec.get("entries", []):
            if isinstance(e.get("score"), (int, float)):
                scores.append(float(e["score"]))
                if abs(e["score"] - threshold) <= margin:
                    margin_hits += 1
        b.update(
            {
                "time": rec.get("time"),
                "host": rec.get("host"),
                "judge": judge,
                "mode": rec.get("mode"),
                "kept": rec.get("kept", 0),
                "pruned": rec.get("pruned", 0),
                "unjudged": rec.get("unjudged", 0),
                "chars_before": rec.get("chars_before", 0),
                "chars_after": rec.get("chars_after", 0),
                "tokens_before": rec.get("tokens_before", 0),
                "tokens_after": rec.get("tokens_after", 0),
                "tokens_estimated": rec.get("tokens_estimated", True),
                "duration_ms": rec.get("duration_ms", 0),
                "chars_after_enforced": rec.get("chars_after_enforced"),
                "tokens_after_enforced": rec.get("tokens_after_enforced"),
                "errors": rec.get("errors", []),
                "entries": rec.get("entries", []),
                "pruned_entries": [
                    {
                        "section": e.get("section"),
                        "entry": e.get("text"),
                        "score": e.get("score"),
                        "quote": e.get("quote") or "no source found",
                    }
                    for e in pruned
                ],
            }
        )
        for k in (
            "kept",
            "pruned",
            "unjudged",
            "chars_before",
            "chars_after",
            "tokens_before",
            "tokens_after",
            "duration_ms",
        ):
            totals[k] += rec.get(k, 0) or 0
        totals["judged"] += 1
    if scores and margin is not None and margin_hits / len(scores) > THRESHOLD_CLUSTER_SHARE:
        warnings.append(
            f"{margin_hits} of {len(scores)} scores ({margin_hits / len(scores):.0%}) lie within "
            f"{margin} of the threshold {threshold}: move the threshold off the cluster"
        )
    expected = expected_models(config)
    for name, seen in sorted(models.items()):
        want = expected.get(name)
        other = sorted(m for m in seen if want and m != want)
        if other:
            warnings.append(
                f"judge {name!r} ran as model {', '.join(other)}, but its weights or threshold were "
                f"calibrated for {want}: recalibrate (sjc calibrate) or check the threshold"
            )
    if judge_errors:
        warnings.append(f"{judge_errors} judged summaries had judge errors (entries kept unjudged): see 'errors'")
    if hook_failures:
        warnings.append(f"{hook_failures} hook events produced no judgment (error or time budget): see 'errors'")
    if corrupt:
        warnings.append(f"{len(corrupt)} corrupt log lines were skipped")
    saved = totals["chars_before"] - totals["chars_after"]
    return {
        "boundaries": list(boundaries.values()),
        "totals": {
            **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in totals.items()},
            "chars_saved": saved,
            "tokens_estimated": True,
        },
        "warnings": warnings,
        "corrupt": corrupt,
        "scores": scores,
        "threshold": threshold,
        "margin": margin,
    }


def render_terminal(report: dict[str, Any], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    for b in report["boundaries"]:
        head = f"[bold]{b['session']}[/bold] boundary {b.get('boundary') if b.get('boundary') is not None else '-'}"
        for t in b.get("tools", []):
            console.print(
                f"{head}  tool results: {t['status']}, kept {t['kept']}, truncated {t['truncated']}, "
                f"dropped {t['dropped']}, characters {t['chars_before']}→{t['chars_after']}"
            )
        if "judge" not in b:
            if b.get("statuses"):
                console.print(f"{head}: {', '.join(b.get('statuses', []))} {'; '.join(b.get('errors', []))[:200]}")
            continue
        console.print(
            f"{head}  {b.get('time', '')}  {b['judge'].get('name')}/{b['judge'].get('model')}  mode {b.get('mode')}  "
            f"kept {b['kept']} pruned {b['pruned']} unjudged {b['unjudged']}  chars {b['chars_before']}→"
            f"{b['chars_after']}  tokens {b['tokens_before']}→{b['tokens_after']} (estimated)  "
            f"{b.get('duration_ms', 0):.0f} ms"
            + (
                f"  [shadow: pruning would leave {b['chars_after_enforced']} characters, "
                f"{b['tokens_after_enforced']} tokens]"
                if b.get("chars_after_enforced") is not None
                else ""
            )
        )
        if b["pruned_entries"]:
            t = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
            for col in ("section", "entry", "score", "quote"):
                t.add_column(col, overflow="fold")
            for p in b["pruned_entries"]:
                t.add_row(
                    str(p["section"])[:24],
                    str(p["entry"])[:90],
                    "-" if p["score"] is None else f"{p['score']:.2f}",
                    str(p["quote"])[:70],
                )
            console.print(t)
        for err in b.get("errors", []):
            console.print(f"  [red]error[/red] {err}")
    tot = report["totals"]
    console.print(
        f"\n[bold]totals[/bold]: {int(tot.get('records', 0))} records, {int(tot.get('judged', 0))} judged, kept "
        f"{int(tot.get('kept', 0))}, pruned {int(tot.get('pruned', 0))}, unjudged {int(tot.get('unjudged', 0))}; "
        f"characters {int(tot.get('chars_before', 0))}→{int(tot.get('chars_after', 0))}, tokens "
        f"{int(tot.get('tokens_before', 0))}→{int(tot.get('tokens_after', 0))} (estimated, about 4 characters a "
        f"token); {tot.get('duration_ms', 0):.0f} ms judging"
    )
    for w in report["warnings"]:
        console.print(f"[yellow]warning[/yellow]: {w}")


def verify(path: Path) -> tuple[int, list[str]]:
    """Check the hash chain: every record unaltered, none removed, none reordered. ``(records, problems)``."""
    if not path.exists():
        raise InputError(f"no decision log at {path}")
    rows = list(decision_log.read(path))
    hashes = {rec.get("hash"): n for n, rec, _ in rows if rec}
    problems: list[str] = []
    prev = decision_log.GENESIS
    count = 0
    for n, rec, raw in rows:
        if rec is None:
            problems.append(f"line {n}: corrupt (not JSON): {raw[:50]!r}")
            prev = None
            continue
        count += 1
        if "hash" not in rec or "prev" not in rec:
            problems.append(f"line {n}: no hash chain fields")
            prev = None
            continue
        if decision_log.record_hash(rec) != rec["hash"]:
            problems.append(f"line {n}: altered (its content does not match its hash)")
        if prev is not None and rec["prev"] != prev:
            where = hashes.get(rec["prev"])
            if where is not None and where > n:
                problems.append(f"line {n}: out of order (its predecessor is line {where})")
            elif where is not None:
                problems.append(f"line {n}: out of order or a record was removed (its predecessor is line {where})")
            else:
                problems.append(f"line {n}: the record before it was removed or altered (chain broken)")
        prev = rec["hash"]
    return count, problems
