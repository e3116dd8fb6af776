"""``sjc audit --html``: one self-contained page (no network, no external file) of the decision log.

Per boundary, the logged entries in order with the pruned ones struck through, score, quote and
origin on expand; the score histogram and the pruned fraction as the threshold moves, as inline
SVG; a session filter (also settable as ``#session=<id>`` in the URL).
"""

from __future__ import annotations

import html
import json
from typing import Any

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1d1d1f;padding:0 1rem}
h1{font-size:1.4rem} h2{font-size:1.05rem;margin:1.6rem 0 .3rem} .meta{color:#666;font-size:12px}
.warn{background:#fff4ce;border-left:4px solid #e0a800;padding:.4rem .7rem;margin:.3rem 0}
.boundary{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
.entry{margin:.15rem 0} .entry summary{cursor:pointer;list-style:none}
.sec{color:#555;font-size:12px;margin-right:.4rem} .score{font-variant-numeric:tabular-nums;color:#555;font-size:12px}
.prune summary{color:#a00} .prune del{text-decoration:line-through;color:#a00}
.details{font-size:12px;color:#444;margin:.2rem 0 .4rem 1.2rem} .charts{display:flex;gap:2rem;flex-wrap:wrap}
.hidden{display:none} select{font:inherit}
"""

JS = """
function applyFilter(v){document.querySelectorAll('.boundary').forEach(function(b){
  b.classList.toggle('hidden', v !== '' && b.dataset.session !== v);});
  var s=document.getElementById('session'); if(s.value!==v){s.value=v;}
  document.getElementById('shown').textContent=document.querySelectorAll('.boundary:not(.hidden)').length;}
document.getElementById('session').addEventListener('change',function(e){applyFilter(e.target.value);
  location.hash = e.target.value ? 'session='+encodeURIComponent(e.target.value) : '';});
var m=location.hash.match(/session=([^&]+)/); applyFilter(m?decodeURIComponent(m[1]):'');
"""


def _esc(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def histogram_svg(scores: list[float], width: int = 420, height: int = 180) -> str:
    bins = [0] * 10
    for s in scores:
        bins[min(9, int(s * 10))] += 1
    top = max(bins) or 1
    bw = (width - 40) / 10
    bars = []
    for i, n in enumerate(bins):
        h = (height - 40) * n / top
        x = 30 + i * bw
        bars.append(
            f'<rect class="bar" x="{x:.1f}" y="{height - 20 - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" '
            f'fill="#4c78a8"><title>{i / 10:.1f}–{(i + 1) / 10:.1f}: {n}</title></rect>'
        )
        bars.append(
            f'<text x="{x + bw / 2:.1f}" y="{height - 5}" font-size="10" text-anchor="middle">{i / 10:.1f}</text>'
        )
    return (
        f'<svg id="histogram" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="score histogram"><text x="30" y="14" font-size="12">scores ({len(scores)})</text>'
        + "".join(bars)
        + "</svg>"
    )


def curve_svg(scores: list[float], margin: float, width: int = 420, height: int = 180) -> str:
    pts = []
    n = max(1, len(scores))
    for i in range(1, 10):
        t = i / 10
        frac = sum(1 for s in scores if s < t - margin) / n
        pts.append((30 + (width - 50) * (t - 0.1) / 0.8, height - 25 - (height - 50) * frac, t, frac))
    path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y, _, _) in enumerate(pts))
    dots = "".join(
        f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#e45756"><title>threshold {t:.1f}:'
        f" {f:.0%} pruned</title></circle>"
        for x, y, t, f in pts
    )
    return (
        f'<svg id="curve" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="pruned fraction by threshold"><text x="30" y="14" font-size="12">pruned fraction by '
        f'threshold</text><path d="{path}" fill="none" stroke="#e45756" stroke-width="2"/>{dots}'
        f'<text x="30" y="{height - 5}" font-size="10">0.1</text><text x="{width - 30}" y="{height - 5}" '
        f'font-size="10">0.9</text><text x="2" y="{height - 25}" font-size="10">0%</text>'
        f'<text x="2" y="28" font-size="10">100%</text></svg>'
    )


def render_html(report: dict[str, Any], log_path: str) -> str:
    sessions = sorted({b["session"] for b in report["boundaries"]})
    options = '<option value="">all sessions</option>' + "".join(
        f'<option value="{_esc(s)}">{_esc(s)}</option>' for s in sessions
    )
    parts = []
    for b in report["boundaries"]:
        label = f"{_esc(b['session'])} · boundary {_esc(b.get('boundary'))}"
        if "judge" not in b and not b.get("statuses"):
            tools = "; ".join(
                f"tool results {t['status']}: kept {t['kept']}, truncated {t['truncated']}, dropped {t['dropped']}"
                for t in b.get("tools", [])
            )
            parts.append(
                f'<div class="boundary" data-session="{_esc(b["session"])}"><h2>{label}</h2>'
                f'<p class="meta">{_esc(tools)}</p></div>'
            )
            continue
        if "judge" not in b:
            parts.append(
                f'<div class="boundary" data-session="{_esc(b["session"])}"><h2>{label}</h2><p class="meta">'
                f"{_esc(', '.join(b.get('statuses', [])))}: {_esc('; '.join(b.get('errors', [])))}</p></div>"
            )
            continue
        rows = []
        last_section = None
        for e in b.get("entries", []):
            pruned = e.get("decision") == "prune"
            sec = e.get("section")
            if sec != last_section:
                rows.append(f'<div class="sec">{_esc(sec) or "(no section)"}</div>')
                last_section = sec
            text = _esc(e.get("text"))
            body = f"<del>{text}</del>" if pruned else text
            score = "–" if e.get("score") is None else f"{e['score']:.2f}"
            quote = e.get("quote") or ("no source found" if pruned else "")
            rows.append(
                f'<details class="entry {"prune" if pruned else "keep"}" data-decision="{_esc(e.get("decision"))}">'
                f'<summary><span class="score">{score}</span> {body}</summary><div class="details">decision '
                f"{_esc(e.get('decision'))}{' (near threshold)' if e.get('near_threshold') else ''}"
                f"{' · contradicted' if e.get('contradicted') else ''} · quote: {_esc(quote)}"
                f"{' · origin: ' + _esc(e.get('origin')) if e.get('origin') else ''}</div></details>"
            )
        parts.append(
            f'<div class="boundary" data-session="{_esc(b["session"])}"><h2>{label}</h2><p class="meta">'
            f"{_esc(b.get('time'))} · {_esc(b['judge'].get('name'))}/{_esc(b['judge'].get('model'))} · mode "
            f"{_esc(b.get('mode'))} · kept {b['kept']}, pruned {b['pruned']}, unjudged {b['unjudged']} · characters "
            f"{b['chars_before']}→{b['chars_after']} · tokens {b['tokens_before']}→{b['tokens_after']} (estimated) · "
            f"{b.get('duration_ms', 0):.0f} ms</p>{''.join(rows)}</div>"
        )
    warnings = "".join(f'<div class="warn">{_esc(w)}</div>' for w in report["warnings"])
    tot = report["totals"]
    margin = report.get("margin") or 0.05
    data = json.dumps({"totals": tot}).replace("</", "<\\/")
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
    t = {
        k: int(tot.get(k, 0))
        for k in ("records", "judged", "kept", "pruned", "chars_before", "chars_after", "tokens_before", "tokens_after")
    }
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sjc decision log</title>
<meta http-equiv="Content-Security-Policy" content="{csp}">
<style>{CSS}</style></head><body>
<h1>sjc decision log</h1>
<p class="meta">{_esc(log_path)} · {t["records"]} records, {t["judged"]} judged summaries · kept {t["kept"]},
pruned {t["pruned"]} · characters {t["chars_before"]}→{t["chars_after"]} ·
tokens {t["tokens_before"]}→{t["tokens_after"]} (estimated)</p>
{warnings}
<div class="charts">{histogram_svg(report["scores"])}{curve_svg(report["scores"], margin)}</div>
<p><label>Session <select id="session">{options}</select></label> · <span id="shown"></span> boundaries shown</p>
{"".join(parts)}
<script type="application/json" id="sjc-data">{data}</script>
<script>{JS}</script>
</body></html>
"""
