"""The audit shown in a terminal (rich tables, at most ``WIDTH`` columns), and the lines ``sjc prune``
prints on stderr for what it removed. Text from the log is shown literally (``audit.literal``)."""

from __future__ import annotations

from typing import Any

from sjc_mcp.audit.explain import doubtful, evidence, literal, reason, session_label, short_time, text_is_whole
from sjc_mcp.audit.summary import WIDTH


def _one_line(x: Any, limit: int) -> str:
    text = "" if x is None else str(x)
    s = " ↵ ".join(literal(part.strip()) for part in text.replace("\t", " ").split("\n") if part.strip())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def make_console(file: Any = None) -> Any:
    import shutil

    from rich.console import Console

    width = min(shutil.get_terminal_size((WIDTH, 24)).columns, WIDTH)
    return Console(file=file, width=width, highlight=False, emoji=False, markup=False)


_LABEL = {"enforced": "enforced", "shadow": "shadow (nothing removed)", "judge": "judge only (nothing removed)"}


def _error_lines(console: Any, errors: list[str]) -> None:
    from rich.text import Text

    for err in errors:
        console.print(Text("  error ", style="red") + Text(_one_line(err, 300)), overflow="fold")


def _warning_lines(console: Any, warnings: list[str]) -> None:
    from rich.padding import Padding
    from rich.text import Text

    for w in warnings:  # wrapped lines indented under the first
        console.print(Padding(Text("warning ", style="yellow") + Text(_one_line(w, 400)), (0, 0, 0, 2)))


def _head(console: Any, b: dict[str, Any]) -> None:
    """The boundary's title, and what was done to its tool results."""
    from rich.text import Text

    label = session_label(b)
    if label:
        console.print(Text(label, style="bold"), overflow="fold")
    head = Text("  " if label else "")
    head.append(literal(b["session"]), style="dim" if label else "bold")
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


def _status(console: Any, b: dict[str, Any]) -> None:
    """A boundary with no judgment: its statuses, note and errors."""
    from rich.text import Text

    if b.get("statuses"):
        line = Text(f"  {', '.join(literal(s) for s in b['statuses'])}")
        if b.get("note"):
            line.append(f": {_one_line(b['note'], 200)}")
        console.print(line, overflow="fold")
    _error_lines(console, b.get("errors", []))


def _judgment(console: Any, b: dict[str, Any]) -> None:
    """A judged boundary's decision: kind, time, judge, threshold; its counts; earlier records not counted."""
    from rich.text import Text

    line = Text("  ")
    line.append(_LABEL.get(b["kind"], b["kind"]), style="bold" if b["kind"] == "enforced" else "yellow")
    line.append(
        f" · {short_time(b.get('time'))} · {literal(b['judge'].get('name'))}/{literal(b['judge'].get('model'))}"
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


def _entries(console: Any, b: dict[str, Any], width: int, show_kept: bool) -> None:
    """The pruned and doubtful entries (every one with ``show_kept``): decision, score, section, text, why."""
    from rich.table import Table
    from rich.text import Text

    rows = [e for e in b.get("entries", []) if show_kept or e.get("decision") == "prune" or doubtful(e)]
    if not rows:
        return
    t = Table(show_header=True, header_style="bold", box=None, padding=(0, 1), width=width, pad_edge=False)
    t.add_column("", width=5, no_wrap=True)
    t.add_column("score", width=5, no_wrap=True, justify="right")
    t.add_column("section", width=14, no_wrap=True, overflow="ellipsis")
    t.add_column("entry", ratio=1, overflow="fold")
    t.add_column("why · evidence", ratio=1, overflow="fold")
    for e in rows:
        pruned = e.get("decision") == "prune"
        doubt = doubtful(e)
        style = "red" if pruned else "yellow" if doubt else "dim"
        score = "-" if e.get("score") is None else f"{e['score']:.2f}"
        text = _one_line(e.get("text"), 240)
        if not text_is_whole(e) and not text.endswith("…"):
            text += "…"
        why = reason(e, b.get("threshold"), b.get("margin"))
        if pruned and not e.get("reason"):  # a judge's reason already names its evidence
            why += " · " + evidence(e)
        t.add_row(
            Text("prune" if pruned else "doubt" if doubt else "keep", style=style),
            Text(score, style=style),
            Text(_one_line(e.get("section") or "", 14), style=style),
            Text(text, style=style),
            Text(_one_line(why, 200), style=style),
        )
    console.print(t)


def _totals(console: Any, report: dict[str, Any]) -> None:
    from rich.text import Text

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
    at_boundaries = tot.get("boundary_warnings", 0)
    for w in report["warnings"][: len(report["warnings"]) - at_boundaries]:  # the log's own; each boundary's above
        console.print(Text("warning: ", style="yellow") + Text(literal(w)), overflow="fold")
    if at_boundaries:
        console.print(
            Text(f"{at_boundaries} warnings at the boundaries above (each under its boundary)", style="yellow"),
            overflow="fold",
        )


def render_terminal(report: dict[str, Any], console: Any = None, show_kept: bool = False) -> None:
    console = console or make_console()
    width = min(console.width, WIDTH)
    for b in report["boundaries"]:
        _head(console, b)
        if "judge" not in b:
            _status(console, b)
            _warning_lines(console, b.get("warnings", []))
            continue
        _judgment(console, b)
        _warning_lines(console, b.get("warnings", []))
        _entries(console, b, width, show_kept)
        _error_lines(console, b.get("errors", []))
    _totals(console, report)


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
