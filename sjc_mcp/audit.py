"""``sjc audit``: read the decision log back. What was pruned at each boundary and why, what it saved,
what went wrong, and whether the log itself is whole and unedited (``--verify``).

Totals mean one thing: per boundary (session and boundary id), the latest enforce-mode decision
counts. A shadow-mode run or replay, or a ``judge`` that changed nothing, is shown as what it is
(what pruning would have done) and never added to what was removed; earlier decisions of the same
boundary are listed as its history.

Reading is streaming and tolerant: a corrupt line is reported and skipped, never fatal. Text from
the log is shown literally: no markup, control characters made visible.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sjc_mcp import log as decision_log
from sjc_mcp.errors import InputError

THRESHOLD_CLUSTER_SHARE = 0.15  # warn when more than this share of scores sit within the margin of the threshold
WIDTH = 100  # the terminal audit fits this many columns
SUM_KEYS = ("kept", "pruned", "unjudged", "chars_before", "chars_after", "tokens_before", "tokens_after")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


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
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a decision log")
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


def kind(rec: dict[str, Any]) -> str:
    """What a record is: ``enforced`` (a decision that changed the summary, or would have had it been
    committed), ``shadow`` (judged, nothing changed: shadow mode, replays), ``judge`` (a judge-only run),
    ``tools`` (relevance pruning of tool results) or ``status`` (no judgment: disabled, error, nothing)."""
    if rec.get("op") == "tools":
        return "tools"
    if rec.get("status", "judged") != "judged":
        return "status"
    if rec.get("op") == "judge":
        return "judge"
    if rec.get("mode") == "shadow" or rec.get("op") == "replay":
        return "shadow"
    return "enforced"


def text_is_whole(e: dict[str, Any]) -> bool:
    """Whether the logged text is the entry's whole text (its hash matches), or cut by the log."""
    sha, text = e.get("text_sha"), e.get("text")
    if not sha or text is None:
        return True
    return hashlib.sha256(str(text).encode()).hexdigest()[: len(sha)] == sha


def reason(e: dict[str, Any], threshold: float | None, margin: float | None = None) -> str:
    """Why an entry went the way it did: its score against the cut (an entry is pruned when its score
    is below the threshold less the margin), and the judge's own ``reason`` when the log has one."""
    decision, score = e.get("decision"), e.get("score")
    if decision == "unjudged" or score is None:
        return str(e.get("reason") or "not judged (kept)")
    th = 0.5 if threshold is None else threshold
    cut = th - (margin or 0)
    if decision == "prune":
        why = f"score {score:.2f} < {cut:.2f}"
    elif e.get("near_threshold") or score < th:
        why = f"score {score:.2f} within the margin below the threshold {th:g}: kept, flagged"
    else:
        why = f"score {score:.2f} ≥ threshold {th:g}"
    if e.get("contradicted"):
        why += "; a source contradicts it"
    if e.get("reason"):
        why += f": {e['reason']}"
    return why


def evidence(e: dict[str, Any]) -> str:
    quote = e.get("quote")
    if not quote:
        return "no source found"
    return f"{quote} ({e['origin']})" if e.get("origin") else str(quote)


def _boundary_keys(records: list[dict]) -> list[tuple[str, str]]:
    """(session, boundary id) per record. A record without a caller-given id (tool results, a status)
    joins the boundary its session and index name, when another record gives that one an id."""
    alias: dict[tuple[str, Any], str] = {}
    for rec in records:
        bid = rec.get("boundary_id")
        if bid and not str(bid).startswith(decision_log.DERIVED_PREFIX) and rec.get("boundary") is not None:
            alias.setdefault((str(rec.get("session")), rec["boundary"]), str(bid))
    keys = []
    for rec in records:
        session = str(rec.get("session") or rec.get("source") or "-")
        bid = rec.get("boundary_id")
        if bid is None or str(bid).startswith(decision_log.DERIVED_PREFIX):
            bid = alias.get((session, rec.get("boundary")), bid)
        if bid is None:
            bid = f"#{rec['boundary']}" if rec.get("boundary") is not None else "-"
        keys.append((session, str(bid)))
    return keys


def _shown(rec: dict[str, Any], counted: bool) -> dict[str, Any]:
    judge = rec.get("judge") or {}
    threshold = rec.get("threshold", 0.5)
    entries = rec.get("entries", [])
    return {
        "kind": "enforced" if counted else kind(rec),
        "op": rec.get("op"),
        "time": rec.get("time"),
        "host": rec.get("host"),
        "judge": judge,
        "mode": rec.get("mode"),
        "threshold": threshold,
        "margin": rec.get("margin", 0.05),
        **{k: rec.get(k, 0) or 0 for k in SUM_KEYS},
        "tokens_estimated": rec.get("tokens_estimated", True),
        "duration_ms": rec.get("duration_ms", 0) or 0,
        "chars_after_enforced": rec.get("chars_after_enforced"),
        "tokens_after_enforced": rec.get("tokens_after_enforced"),
        "errors": rec.get("errors", []),
        "entries": entries,
        "pruned_entries": [
            {
                "section": e.get("section"),
                "entry": e.get("text"),
                "text_whole": text_is_whole(e),
                "score": e.get("score"),
                "reason": reason(e, threshold, rec.get("margin", 0.05)),
                "quote": e.get("quote") or "no source found",
                "origin": e.get("origin"),
            }
            for e in entries
            if e.get("decision") == "prune"
        ],
        "line": rec.get("_line"),
    }


def summarise(records: list[dict], corrupt: list[str], config: Any = None) -> dict[str, Any]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for key, rec in zip(_boundary_keys(records), records, strict=True):
        groups.setdefault(key, []).append(rec)
    boundaries: list[dict[str, Any]] = []
    totals: dict[str, float] = defaultdict(float)
    shadow: dict[str, float] = defaultdict(float)
    scores: list[float] = []
    margin_hits = 0
    threshold = margin = None
    models: dict[str, set[str]] = defaultdict(set)
    judge_errors = hook_failures = 0
    for (session, bid), recs in groups.items():
        b: dict[str, Any] = {
            "session": session,
            "boundary": next((r["boundary"] for r in recs if r.get("boundary") is not None), None),
            "boundary_id": bid,
            "records": len(recs),
            "events": [r.get("event") or r.get("op") for r in recs],
        }
        totals["records"] += len(recs)
        kinds = {id(r): kind(r) for r in recs}  # each record's kind, worked out once
        judged = [r for r in recs if kinds[id(r)] in ("enforced", "shadow", "judge")]
        enforced = [r for r in judged if kinds[id(r)] == "enforced"]
        shown = enforced[-1] if enforced else (judged[-1] if judged else None)
        for r in recs:
            k = kinds[id(r)]
            if r.get("op") == "hook" and r.get("status") in ("error", "timeout"):
                hook_failures += 1
            if k in ("enforced", "shadow", "judge"):
                judge = r.get("judge") or {}
                models[str(judge.get("name"))].add(str(judge.get("model")))
                totals["duration_ms"] += r.get("duration_ms", 0) or 0
                if r.get("errors"):
                    judge_errors += 1
        tools = [r for r in recs if kinds[id(r)] == "tools"]
        if tools:
            b["tools"] = [
                {
                    "status": t.get("status", "judged"),
                    "kept": t.get("kept", 0),
                    "truncated": t.get("truncated", 0),
                    "dropped": t.get("dropped", 0),
                    "superseded": t.get("superseded", 0),
                    "superseded_by": [
                        f"{r.get('tool') or 'tool'} result {r.get('id')}: {r.get('note')}"
                        for r in t.get("results") or []
                        if isinstance(r, dict) and r.get("decision") == "supersede"
                    ][:50],
                    "chars_before": t.get("chars_before", 0),
                    "chars_after": t.get("chars_after", 0),
                    "errors": t.get("errors", []),
                    "judge": t.get("judge"),
                    "time": t.get("time"),
                }
                for t in tools
            ]
            totals["tool_chars_before"] += tools[-1].get("chars_before", 0) or 0
            totals["tool_chars_after"] += tools[-1].get("chars_after", 0) or 0
        statuses = [r for r in recs if kinds[id(r)] == "status"]
        if statuses:
            b["statuses"] = [str(r.get("status")) for r in statuses]
            b["status_errors"] = [err for r in statuses for err in r.get("errors", [])]
            if shown is None:
                b["errors"] = b["status_errors"]
                b["note"] = next((r.get("note") for r in reversed(statuses) if r.get("note")), None)
        b["history"] = [
            {
                "time": r.get("time"),
                "op": r.get("op"),
                "mode": r.get("mode"),
                "kind": kinds[id(r)],
                "status": r.get("status", "judged"),
                "pruned": r.get("pruned", 0),
                "counted": r is shown and bool(enforced),
                "line": r.get("_line"),
            }
            for r in recs
        ]
        if shown is not None:
            b.update(_shown(shown, counted=bool(enforced)))
            totals["judged"] += 1
            threshold, margin = shown.get("threshold", 0.5), shown.get("margin", 0.05)
            for e in shown.get("entries", []):
                if isinstance(e.get("score"), (int, float)):
                    scores.append(float(e["score"]))
                    if abs(e["score"] - threshold) <= margin:
                        margin_hits += 1
            if enforced:
                totals["enforced"] += 1
                for k in SUM_KEYS:
                    totals[k] += shown.get(k, 0) or 0
            else:
                shadow["boundaries"] += 1
                shadow["would_prune"] += shown.get("pruned", 0) or 0
                shadow["chars_before"] += shown.get("chars_before", 0) or 0
                after = shown.get("chars_after_enforced")
                shadow["chars_after_if_enforced"] += shown.get("chars_before", 0) if after is None else after
            totals["not_counted"] += len(judged) - 1  # earlier runs on the same boundary
        boundaries.append(b)
    warnings: list[str] = []
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
    out_totals = {k: (round(v, 2) if k == "duration_ms" else int(v)) for k, v in totals.items()}
    for k in ("records", "judged", "enforced", "not_counted", *SUM_KEYS):
        out_totals.setdefault(k, 0)
    return {
        "boundaries": boundaries,
        "totals": {
            **out_totals,
            "boundaries": len(boundaries),
            "chars_saved": int(totals["chars_before"] - totals["chars_after"]),
            "tokens_estimated": True,
            "shadow": {
                k: int(shadow.get(k, 0))
                for k in ("boundaries", "would_prune", "chars_before", "chars_after_if_enforced")
            },
        },
        "warnings": warnings,
        "corrupt": corrupt,
        "scores": scores,
        "threshold": threshold,
        "margin": margin,
    }


# terminal -------------------------------------------------------------------------------------------


def literal(x: Any) -> str:
    """Text from the log as it may be shown: control characters (ANSI escapes included) made visible."""
    s = "" if x is None else str(x)
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", s
    )


def _one_line(x: Any, limit: int) -> str:
    s = " ↵ ".join(part.strip() for part in literal(x).replace("\t", " ").split("\n") if part.strip())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _short_time(t: Any) -> str:
    s = literal(t or "")
    return s[:16].replace("T", " ") if len(s) >= 16 and s[10:11] == "T" else s


def make_console(file: Any = None) -> Any:
    import shutil

    from rich.console import Console

    width = min(shutil.get_terminal_size((WIDTH, 24)).columns, WIDTH)
    return Console(file=file, width=width, highlight=False, emoji=False, markup=False)


def render_terminal(report: dict[str, Any], console: Any = None, show_kept: bool = False) -> None:
    from rich.table import Table
    from rich.text import Text

    console = console or make_console()
    width = min(console.width, WIDTH)
    for b in report["boundaries"]:
        head = Text()
        head.append(literal(b["session"]), style="bold")
        head.append(f" · boundary {literal(b['boundary']) if b.get('boundary') is not None else '-'}")
        head.append(f" · {literal(b['boundary_id'])}", style="dim")
        console.print(head, overflow="fold")
        for t in b.get("tools", []):
            console.print(
                Text(
                    f"  tool results: {literal(t['status'])}, kept {t['kept']}, superseded {t.get('superseded', 0)}, "
                    f"truncated {t['truncated']}, dropped {t['dropped']}, "
                    f"characters {t['chars_before']}→{t['chars_after']}"
                )
            )
            for line in t.get("superseded_by", []):
                console.print(Text(f"    {_one_line(line, 94)}", style="dim"))
        if "judge" not in b:
            if b.get("statuses"):
                line = Text(f"  {', '.join(literal(s) for s in b['statuses'])}")
                if b.get("note"):
                    line.append(f": {_one_line(b['note'], 200)}")
                console.print(line, overflow="fold")
            for err in b.get("errors", []):
                console.print(Text("  error ", style="red") + Text(_one_line(err, 300)), overflow="fold")
            continue
        label = {"enforced": "enforced", "shadow": "shadow (nothing removed)", "judge": "judge only (nothing removed)"}
        line = Text("  ")
        line.append(label.get(b["kind"], b["kind"]), style="bold" if b["kind"] == "enforced" else "yellow")
        line.append(
            f" · {_short_time(b.get('time'))} · {literal(b['judge'].get('name'))}/{literal(b['judge'].get('model'))}"
            f" · threshold {b['threshold']:g}, prunes below {b['threshold'] - (b.get('margin') or 0):.2f}"
        )
        console.print(line, overflow="fold")
        verb = "pruned" if b["kind"] == "enforced" else "would prune"
        stats = Text(f"  kept {b['kept']} · ")
        stats.append(f"{verb} {b['pruned']}", style="red" if b["pruned"] else "")
        stats.append(
            f" · unjudged {b['unjudged']} · characters {b['chars_before']}→{b['chars_after']} · tokens "
            f"{b['tokens_before']}→{b['tokens_after']} (est.) · {b.get('duration_ms', 0):.0f} ms"
        )
        console.print(stats, overflow="fold")
        if b.get("chars_after_enforced") is not None and b["kind"] != "enforced":
            console.print(
                Text(
                    f"  shadow: pruning would leave {b['chars_after_enforced']} characters, "
                    f"{b.get('tokens_after_enforced')} tokens",
                    style="yellow",
                ),
                overflow="fold",
            )
        others = [h for h in b["history"] if not h["counted"] and h["kind"] != "tools"]
        if len(b["history"]) > 1 and others:
            desc = "; ".join(
                f"{literal(h['op'] or h['kind'])} {literal(h['mode'] or '')} {literal(h['time'] or '')}".strip()
                for h in others[-4:]
            )
            more = f" (and {len(others) - 4} more)" if len(others) > 4 else ""
            console.print(Text(f"  also logged, not counted: {desc}{more}", style="dim"), overflow="fold")
        rows = [e for e in b.get("entries", []) if show_kept or e.get("decision") == "prune"]
        if rows:
            t = Table(show_header=True, header_style="bold", box=None, padding=(0, 1), width=width, pad_edge=False)
            t.add_column("", width=5, no_wrap=True)
            t.add_column("score", width=5, no_wrap=True, justify="right")
            t.add_column("section", width=14, no_wrap=True, overflow="ellipsis")
            t.add_column("entry", ratio=1, overflow="fold")
            t.add_column("why · evidence", ratio=1, overflow="fold")
            for e in rows:
                pruned = e.get("decision") == "prune"
                style = "red" if pruned else "dim"
                score = "-" if e.get("score") is None else f"{e['score']:.2f}"
                text = _one_line(e.get("text"), 240)
                if not text_is_whole(e) and not text.endswith("…"):
                    text += "…"
                why = reason(e, b.get("threshold"), b.get("margin"))
                if pruned and not e.get("reason"):  # a judge's reason already names its evidence
                    why += " · " + evidence(e)
                why = _one_line(why, 200)
                t.add_row(
                    Text("prune" if pruned else "keep", style=style),
                    Text(score, style=style),
                    Text(_one_line(e.get("section") or "", 14), style=style),
                    Text(text, style=style),
                    Text(why, style=style),
                )
            console.print(t)
        for err in b.get("errors", []):
            console.print(Text("  error ", style="red") + Text(_one_line(err, 300)), overflow="fold")
    tot = report["totals"]
    sh = tot.get("shadow", {})
    console.print()
    console.print(
        Text(
            f"totals: {tot.get('records', 0)} records, {tot.get('boundaries', 0)} boundaries. Enforced decisions "
            f"(the latest per boundary) at {tot.get('enforced', 0)}: kept {tot.get('kept', 0)}, pruned "
            f"{tot.get('pruned', 0)}, unjudged {tot.get('unjudged', 0)}; characters {tot.get('chars_before', 0)}→"
            f"{tot.get('chars_after', 0)}, tokens {tot.get('tokens_before', 0)}→{tot.get('tokens_after', 0)} "
            f"(estimated, about 4 characters a token)."
        ),
        overflow="fold",
    )
    if sh.get("boundaries"):
        console.print(
            Text(
                f"shadow and judge-only (nothing removed) at {sh['boundaries']} boundaries: would prune "
                f"{sh['would_prune']} entries, characters {sh['chars_before']}→{sh['chars_after_if_enforced']}.",
                style="yellow",
            ),
            overflow="fold",
        )
    console.print(
        Text(
            f"{tot.get('not_counted', 0)} earlier records of the same boundaries not added; "
            f"{tot.get('duration_ms', 0):.0f} ms judging in all."
        ),
        style="dim",
        overflow="fold",
    )
    for w in report["warnings"]:
        console.print(Text("warning: ", style="yellow") + Text(literal(w)), overflow="fold")


# verify ---------------------------------------------------------------------------------------------


def _records(n: int) -> str:
    return "1 record was" if n == 1 else f"{n} records were"


def _hash_matches(rec: dict[str, Any], raw: str) -> bool:
    """Whether a record is the one its hash was made of. A line as the log writes it is the canonical
    JSON itself, so its bytes less the hash field are hashed as they are (no re-encoding); any other
    line (written by hand, re-formatted) is re-encoded canonically first."""
    h = rec["hash"]
    body = raw.replace(f',"hash":"{h}"', "", 1)
    if body != raw and hashlib.sha256(body.encode()).hexdigest() == h:
        return True
    return decision_log.record_hash(rec) == h


def verify(path: Path) -> tuple[int, list[str], list[str]]:
    """Check the hash chain and the anchor: every record unaltered, none removed, none reordered, none
    cut from the end. ``(records, problems, notes)``; notes do not make the log incomplete."""
    if not path.exists():
        raise InputError(f"no decision log at {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a decision log")
    # the anchor before the log: a writer appends the line, then moves the anchor, so every record an
    # anchor read now names is already in the file (one appended meanwhile is reported as a note)
    anchor = decision_log.read_anchor(path)
    problems: list[str] = []
    notes: list[str] = []
    position: dict[str, int] = {}  # hash -> record number
    lines: dict[int, int] = {}  # record number -> line
    pending: list[tuple[int, int, str]] = []  # (line, record number, its prev) where the chain broke
    prev: str | None = decision_log.GENESIS
    count = 0
    for n, rec, raw in decision_log.read(path):
        if rec is None:
            problems.append(f"line {n}: corrupt (not JSON): {raw[:50]!r}")
            continue
        if not isinstance(rec.get("hash"), str) or "prev" not in rec:
            problems.append(f"line {n}: no hash chain fields")
            prev = None
            continue
        count += 1
        position.setdefault(rec["hash"], count)
        lines[count] = n
        if not _hash_matches(rec, raw):
            problems.append(f"line {n}: altered (its content does not match its hash)")
        if prev is not None and rec["prev"] != prev:
            pending.append((n, count, str(rec["prev"])))
        prev = rec["hash"]
    for n, number, want in pending:
        where = position.get(want)
        if want == decision_log.GENESIS:
            problems.append(f"line {n}: out of order (it was the first record)")
        elif where is not None and where > number:
            problems.append(f"line {n}: out of order (its predecessor is line {lines[where]})")
        elif where is not None:
            problems.append(f"line {n}: out of order or a record was removed (its predecessor is line {lines[where]})")
        else:
            problems.append(f"line {n}: the record before it was removed or altered (chain broken)")
    anchor_file = decision_log.anchor_path(path)
    if anchor is None:
        if count:
            state = "unreadable" if anchor_file.exists() else "missing"
            problems.append(
                f"the anchor {anchor_file} is {state}: records cut from the end of the log cannot be ruled out"
            )
    else:
        at = position.get(anchor["hash"])
        if at is None:
            if count < anchor["records"]:
                problems.append(
                    f"the log ends early: the anchor counts {anchor['records']} records, the log has {count}; "
                    f"{_records(anchor['records'] - count)} cut from the end (or its last record was altered)"
                )
            else:
                problems.append(
                    f"the anchor's last record (hash {anchor['hash'][:12]}…) is not in the log: the end of the log "
                    "was cut or its last record altered"
                )
        else:
            if at != anchor["records"]:
                problems.append(
                    f"the anchor counts {anchor['records']} records up to line {lines[at]}, the log has {at}: "
                    f"records were {'removed' if at < anchor['records'] else 'added'} before it"
                )
            if count > at:
                notes.append(
                    f"{count - at} record(s) after the anchor's last: a writer stopped between the log and the "
                    "anchor (the next append updates it)"
                )
    return count, problems, notes


# sjc prune ------------------------------------------------------------------------------------------


def removal_lines(result: Any, words: int = 8) -> list[str]:
    """One line per entry a prune removed (or, in shadow mode, would have): section, first words, why;
    then one line of totals. For stderr, beside the pruned summary on stdout."""
    verb = "removed" if result.mode != "shadow" else "would remove (shadow mode)"
    lines = []
    for e in result.entries:
        if e.decision != "prune":
            continue
        first = literal(" ".join(str(e.text).split()[:words]))
        if len(str(e.text).split()) > words:
            first += " …"
        fields = {"score": e.score, "decision": e.decision, "contradicted": e.contradicted}
        why = reason({**fields, "reason": getattr(e, "reason", None)}, result.threshold, result.margin)
        if not getattr(e, "reason", None) and not e.quote:
            why += ": no source found"
        lines.append(f"{verb} [{literal(e.section)}] {first} — {literal(why)}")
    n = sum(e.decision == "prune" for e in result.entries)
    lines.append(
        f"{verb} {n} of {len(result.entries)} entries; characters {result.chars_before} → {result.chars_after}"
    )
    return lines
