"""``sjc audit --html``: one self-contained page (no network, no external file) of the decision log.

By default it shows only what was pruned: per boundary, each pruned entry's full logged text (as
``<pre>``, so code stays code), why it went (the decision's reason or its score against the
threshold) and the evidence the judge found, or that it found none. Kept entries are in the page as
data and drawn on demand ("all entries"), which keeps the page small. Filters (session, kind of
decision) drive the boundaries shown, the totals and both charts: the score histogram and the share
of entries pruned as the threshold moves, each with axis titles and the threshold in force marked.

The page's style and script are ``data/report.css`` and ``data/report.js``, inlined. Escaping is by
hand, in one place: every logged string reaches the page through :func:`esc` (HTML
text and attribute values) or :func:`json_for_script` (the data block, with ``<``, ``>``, ``&``
escaped), and the script writes logged text only through ``textContent``. The page is a handful of
fragments, so a template engine would add a dependency without removing any of these three rules.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import html
import json
import os
from pathlib import Path
from typing import Any

from sjc_mcp.audit.explain import doubtful, reason, session_label, text_is_whole
from sjc_mcp.errors import InputError

DATA = Path(__file__).resolve().parent.parent / "data"


KIND_LABEL = {
    "enforced": "enforced",
    "shadow": "shadow (nothing removed)",
    "judge": "judge only (nothing removed)",
}


def esc(x: Any) -> str:
    """Any logged value as HTML text, control characters made visible (lines kept)."""
    from sjc_mcp.terminal import clean

    return html.escape(clean(x, keep_lines=True), quote=False)


def attr(x: Any) -> str:
    """Any logged value as a double-quoted attribute value."""
    return esc(x).replace('"', "&quot;")


def json_for_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<`` survives, so no ``</script>``."""
    return (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _entry_html(e: dict[str, Any], b: dict[str, Any]) -> str:
    cut = "" if text_is_whole(e) else '<div class="cut">… (the log keeps only the start)</div>'
    kind = "keep doubtful" if doubtful(e) else "prune"
    return (
        f'<div class="entry {kind}"><span class="sec">{esc(e.get("section") or "(no section)")}</span>'
        f'<pre class="text">{esc(e.get("text"))}</pre>{cut}'
        f'<div class="why">Why: {esc(reason(e, b.get("threshold"), b.get("margin")))}</div>'
        f"{_evidence_html(e)}</div>"
    )


def _evidence_html(e: dict[str, Any]) -> str:
    if e.get("quote") and e.get("reason") and str(e["quote"])[:60] in str(e["reason"]):
        return ""  # the judge's reason already quotes it, with where it came from
    if not e.get("quote"):
        return '<div class="ev">Evidence: none found in the tool outputs, user messages or previous summary</div>'
    origin = f" ({esc(e['origin'])})" if e.get("origin") else ""
    return f'<div class="ev">Evidence{origin}: <pre>{esc(e["quote"])}</pre></div>'


def _boundary_html(i: int, b: dict[str, Any]) -> str:
    kind = b.get("kind", "status")
    ids = f"{b['session']} · boundary {'-' if b.get('boundary') is None else b['boundary']} · {b['boundary_id']}"
    label = session_label(b)
    warnings = "".join(f'<div class="warn">warning: {esc(w)}</div>' for w in b.get("warnings", []))
    head = (
        f'<div class="boundary" id="b-{i}" data-session="{attr(b["session"])}" data-kind="{attr(kind)}">'
        + (f'<h2>{esc(label)}</h2><p class="meta">{esc(ids)}</p>' if label else f"<h2>{esc(ids)}</h2>")
        + warnings
    )
    tools = "".join(
        f'<p class="meta">tool results {esc(t["status"])}: kept {esc(t["kept"])}, '
        f"superseded {esc(t.get('superseded', 0))}, truncated {esc(t['truncated'])}, "
        f"dropped {esc(t['dropped'])}, characters {esc(t['chars_before'])} → {esc(t['chars_after'])}</p>"
        + "".join(f'<p class="meta">{esc(line)}</p>' for line in t.get("superseded_by", []))
        for t in b.get("tools", [])
    )
    if "judge" not in b:
        status = ""
        if b.get("statuses"):
            note = f" ({b['note']})" if b.get("note") else ""
            status = (
                f'<p class="meta">{esc(", ".join(b["statuses"]))}{esc(note)}'
                f"{': ' + esc('; '.join(b.get('errors', []))) if b.get('errors') else ''}</p>"
            )
        return f"{head}{tools}{status}</div>"
    verb = "pruned" if kind == "enforced" else "would prune"
    shadow = (
        f" · pruning would leave {esc(b['chars_after_enforced'])} characters"
        if b.get("chars_after_enforced") is not None and kind != "enforced"
        else ""
    )
    meta = (
        f'<p class="meta"><span class="kind k-{attr(kind)}">{esc(KIND_LABEL.get(kind, kind))}</span>'
        f"{esc(b.get('time'))} · {esc(b['judge'].get('name'))}/{esc(b['judge'].get('model'))} · threshold "
        f"{esc(b.get('threshold'))} · kept {esc(b['kept'])}, {verb} {esc(b['pruned'])}, unjudged {esc(b['unjudged'])}"
        f" · characters {esc(b['chars_before'])} → {esc(b['chars_after'])}{shadow} · tokens {esc(b['tokens_before'])}"
        f" → {esc(b['tokens_after'])} (estimated) · {float(b.get('duration_ms') or 0):.0f} ms</p>"
    )
    others = [h for h in b.get("history", []) if not h.get("counted") and h.get("kind") != "tools"]
    history = ""
    if len(b.get("history", [])) > 1 and others:
        items = "; ".join(
            f"{h.get('op') or h.get('kind')} {h.get('mode') or ''} {h.get('time') or ''}".strip() for h in others[-5:]
        )
        more = f" and {len(others) - 5} more" if len(others) > 5 else ""
        history = f'<p class="history">Also logged for this boundary, not counted: {esc(items)}{esc(more)}</p>'
    pruned = [e for e in b.get("entries", []) if e.get("decision") == "prune"]
    body = "".join(_entry_html(e, b) for e in pruned) or '<p class="meta">Nothing pruned here.</p>'
    body += "".join(_entry_html(e, b) for e in b.get("entries", []) if doubtful(e))
    errors = "".join(f'<div class="warn">judge error: {esc(err)}</div>' for err in b.get("errors", []))
    n_kept = len(b.get("entries", [])) - len(pruned)
    kept = (
        f'<details class="kept-toggle" data-i="{i}"><summary class="meta">{n_kept} kept entries</summary>'
        f'<div id="kept-{i}"></div></details>'
        if n_kept
        else ""
    )
    return f"{head}{meta}{history}{tools}{errors}{body}{kept}</div>"


def _kept_groups(entries: list[dict[str, Any]]) -> list[list[Any]]:
    """Kept entries as ``[section, [[text, score, whole (1/0)], ...]]``, one group per run of a section."""
    groups: list[list[Any]] = []
    for e in entries:
        if e.get("decision") == "prune":
            continue
        if not groups or groups[-1][0] != e.get("section"):
            groups.append([e.get("section"), []])
        groups[-1][1].append([e.get("text"), e.get("score"), int(text_is_whole(e))])
    return groups


def _data(report: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for b in report["boundaries"]:
        entries = b.get("entries", []) if "judge" in b else []
        rows.append(
            {
                "s": b["session"],
                "k": b.get("kind", "status"),
                "scores": [round(float(e["score"]), 3) for e in entries if isinstance(e.get("score"), (int, float))],
                "kept": b.get("kept", 0),
                "pruned": b.get("pruned", 0),
                "cb": b.get("chars_before", 0),
                "ca": b.get("chars_after", 0),
                "tb": b.get("tokens_before", 0),
                "ta": b.get("tokens_after", 0),
                "cae": b.get("chars_after_enforced"),
            }
        )
    return {"threshold": report.get("threshold") or 0.5, "margin": report.get("margin") or 0.0, "boundaries": rows}


def packed_kept(report: dict[str, Any]) -> str:
    """Every boundary's kept entries, JSON, gzipped and base64-encoded: the page unpacks them only when
    asked to show them (``DecompressionStream``), which keeps a large log's page small."""
    groups = [_kept_groups(b.get("entries", []) if "judge" in b else []) for b in report["boundaries"]]
    raw = json.dumps(groups, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def render_html(report: dict[str, Any], log_path: str) -> str:
    boundaries = report["boundaries"]
    labels: dict[str, str] = {}
    for b in boundaries:  # each session by its label where the log has one, else by its id
        labels.setdefault(b["session"], session_label(b) or b["session"])
    session_opts = '<option value="">all sessions</option>' + "".join(
        f'<option value="{attr(s)}">{esc(labels[s])}</option>' for s in sorted(labels, key=lambda s: labels[s])
    )
    kinds = [k for k in ("enforced", "shadow", "judge") if any(b.get("kind") == k for b in boundaries)]
    kind_opts = '<option value="">all decisions</option>' + "".join(
        f'<option value="{k}">{esc(KIND_LABEL[k])}</option>' for k in kinds
    )
    tot = report["totals"]
    at_boundaries = tot.get("boundary_warnings", 0)
    own = report["warnings"][: len(report["warnings"]) - at_boundaries]  # each boundary's is shown with it
    warnings = "".join(f'<div class="warn">{esc(w)}</div>' for w in own)
    if at_boundaries:
        warnings += f'<div class="warn">{esc(at_boundaries)} warnings at the boundaries below, each with its own</div>'
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
    th = report.get("threshold")
    noscript = (
        f"{tot.get('boundaries', 0)} boundaries; enforced decisions at {tot.get('enforced', 0)}: pruned "
        f"{tot.get('pruned', 0)}, characters {tot.get('chars_before', 0)} → {tot.get('chars_after', 0)}; shadow "
        f"and judge-only at {tot.get('shadow', {}).get('boundaries', 0)}: would prune "
        f"{tot.get('shadow', {}).get('would_prune', 0)}"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sjc decision log</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{attr(csp)}">
<style>{(DATA / "report.css").read_text(encoding="utf-8")}</style></head><body>
<h1>What sjc pruned, and why</h1>
<p class="meta">{esc(log_path)} · {esc(tot.get("records", 0))} records · threshold in force {esc(th)}
(an entry is pruned when its score is below the threshold less the margin {esc(report.get("margin"))}).
Per boundary the latest enforce-mode decision counts; shadow-mode runs, replays and judge-only runs show what
pruning would have done and are not added to what was removed.</p>
{warnings}
<div class="controls">
<label>Session <select id="f-session">{session_opts}</select></label>
<label>Decisions <select id="f-kind">{kind_opts}</select></label>
<label>Show <select id="f-view"><option value="pruned">pruned entries only</option>
<option value="all">all entries (kept ones dimmed)</option></select></label>
</div>
<div id="totals"><noscript>{esc(noscript)}</noscript></div>
<div class="charts">
<svg id="histogram" xmlns="http://www.w3.org/2000/svg" width="480" height="240" role="img"
 aria-label="histogram of judge scores with the threshold marked"></svg>
<svg id="curve" xmlns="http://www.w3.org/2000/svg" width="480" height="240" role="img"
 aria-label="share of entries pruned by threshold, with the threshold in force marked"></svg>
</div>
{"".join(_boundary_html(i, b) for i, b in enumerate(boundaries))}
<script type="application/json" id="sjc-data">{json_for_script(_data(report))}</script>
<script type="application/octet-stream" id="sjc-kept">{packed_kept(report)}</script>
<script>{(DATA / "report.js").read_text(encoding="utf-8")}</script>
</body></html>
"""


def _redacted(value: Any) -> Any:
    """Every string of the report with secrets redacted, as anything that leaves the log is."""
    from sjc_mcp.redact import redacted

    if isinstance(value, str):
        return redacted(value) if len(value) > 7 else value
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def write_html(report: dict[str, Any], log_path: str, out: str | os.PathLike[str]) -> Path:
    """Write the page to ``out`` (creating its folder), atomically; a bad path is an :class:`InputError`."""
    path = Path(out).expanduser()
    if path.is_dir():
        raise InputError(f"--html wants a file name, and {path} is a folder")
    page = render_html(_redacted(report), log_path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the page holds session text
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write the report to {path}: {exc.strerror or exc}") from None
    return path
