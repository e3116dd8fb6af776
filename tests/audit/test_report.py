"""The HTML audit report, read back as a person would: in a real browser (headless Chromium)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sjc_mcp.log import chain as decision_log
from tests.conftest import FIXTURES, sjc_exe


def sjc(*args, home: Path, **env):
    full = dict(os.environ, HOME=str(home), **env)
    return subprocess.run([sjc_exe(), *args], capture_output=True, text=True, env=full, timeout=300)


def _chromium() -> str | None:
    """A Chromium on PATH, if there is one: the suite never installs anything on the machine."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=5000",  # lets the page's script (and the unpacking of kept entries) finish
]


@pytest.fixture(scope="module")
def chromium():
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium on PATH: the HTML report's browser checks need one (Debian: apt-get install chromium)")
    return exe


def browse(exe: str, tmp: Path, url: str, shot: Path | None = None) -> str:
    base = [exe, *CHROME_FLAGS, f"--user-data-dir={tmp / 'profile'}"]
    if shot is not None:
        subprocess.run(
            [*base, f"--screenshot={shot}", "--window-size=1200,1500", url], capture_output=True, timeout=120
        )
        return ""
    return subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout


def totals(dom: str) -> dict[str, int]:
    return {
        k: int(re.search(rf'id="t-{k}">([\d,]+)<', dom).group(1).replace(",", ""))
        for k in ("enforced", "pruned", "shadow", "would")
    }


def _entry(section, text, score, decision, quote=None, whole=True):
    sha = hashlib.sha256((text if whole else text + " and more").encode()).hexdigest()[:16]
    return {"section": section, "text": text, "text_sha": sha, "score": score, "decision": decision, "quote": quote}


def _rec(**kw):
    base = {
        "v": 1,
        "op": "hook",
        "host": "claude-code",
        "judge": {"name": "lexical", "model": "lexical-2"},
        "threshold": 0.5,
        "margin": 0.05,
        "mode": "enforce",
        "status": "judged",
        "unjudged": 0,
        "tokens_before": 30,
        "tokens_after": 20,
        "duration_ms": 5.0,
        "errors": [],
    }
    base.update(kw)
    base["kept"] = sum(e["decision"] == "keep" for e in base["entries"])
    base["pruned"] = sum(e["decision"] == "prune" for e in base["entries"])
    return base


CODE = "Fixed the parser:\n```python\ndef parse(s):\n    return int(s)  # <- was float\n```"
HOSTILE_SESSION = '"><img src=x onerror=alert(1)>'


@pytest.fixture
def small_log(tmp_path):
    path = tmp_path / "d.jsonl"
    decision_log.append(
        path,
        _rec(
            session="A",
            boundary=0,
            boundary_id="a0",
            chars_before=100,
            chars_after=60,
            entries=[
                _entry("Errors", "<script>alert(1)</script> gone", 0.1, "prune", "q </script>"),
                _entry("Files", CODE, 0.2, "prune", None),
                _entry("Files", "<b>kept</b> & fine", 0.9, "keep"),
                _entry("Plans", "long entry cut by the log", 0.3, "prune", None, whole=False),
            ],
        ),
    )
    decision_log.append(
        path,
        _rec(
            session=HOSTILE_SESSION,
            boundary=0,
            boundary_id="b0",
            mode="shadow",
            op="replay",
            chars_before=200,
            chars_after=200,
            chars_after_enforced=150,
            entries=[
                _entry("Tasks", "would go", 0.05, "prune"),
                _entry("Tasks", "w2", 0.15, "prune"),
                _entry("Tasks", "w3", 0.25, "prune"),
                _entry("Tasks", "stays", 0.8, "keep"),
            ],
        ),
    )
    out = tmp_path / "r.html"
    r = sjc("audit", "--html", str(out), "--log", str(path), home=tmp_path)
    assert r.returncode == 0, r.stderr
    return out


def test_report_escapes_every_logged_string(small_log):
    page = small_log.read_text()
    assert "<script>alert" not in page and "<img" not in page and "<b>kept" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; gone" in page
    assert page.count("</script>") == 3  # the data block, the packed kept entries, the code: nothing logged closes one
    # nothing is fetched: no external script, style, image or font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script src" not in page and "<link" not in page and "url(" not in page and "@import" not in page


def test_report_keeps_code_as_code_and_marks_cut_text(small_log):
    page = small_log.read_text()
    assert (
        '<pre class="text">Fixed the parser:\n```python\ndef parse(s):\n    return int(s)  # &lt;- was float\n```</pre>'
        in page
    )
    cut = page.split("long entry cut by the log</pre>", 1)[1][:120]
    assert "the log keeps only the start" in cut
    assert page.split("<script>alert", 1)[0] and "Why: score 0.10 &lt; 0.45" in page
    assert "Evidence: none found" in page and "Evidence: <pre>q &lt;/script&gt;</pre>" in page


@pytest.mark.slow
def test_report_in_chromium_filters_drive_totals_and_charts(small_log, chromium, tmp_path):
    url = f"file://{small_log}"
    dom = browse(chromium, tmp_path, url)
    assert totals(dom) == {"enforced": 1, "pruned": 3, "shadow": 1, "would": 3}
    for title in ("judge score (0 = no source, 1 = supported)", ">entries<", ">threshold<", "entries pruned (%)"):
        assert title in dom, title
    assert dom.count('class="threshold"') == 2 and dom.count("threshold 0.5<") == 2  # marked on both charts
    assert "Judge scores (8 entries)" in dom and dom.count('class="point"') == 21
    assert 'class="entry keep"' not in dom  # pruned only, by default
    a = browse(chromium, tmp_path, url + "#session=A")
    assert totals(a) == {"enforced": 1, "pruned": 3, "shadow": 0, "would": 0} and "Judge scores (4 entries)" in a
    assert a.count('<div class="boundary hidden"') == 1
    shadow = browse(chromium, tmp_path, url + "#kind=shadow")
    assert totals(shadow) == {"enforced": 0, "pruned": 0, "shadow": 1, "would": 3}
    everything = browse(chromium, tmp_path, url + "#view=all")
    assert everything.count('class="entry keep"') == 2  # unpacked on demand, as text
    assert "&lt;b&gt;kept&lt;/b&gt; &amp; fine" in everything and "<img" not in everything
    assert "<script>alert" not in everything


@pytest.fixture(scope="module")
def fixtures_report(tmp_path_factory):
    if not (FIXTURES / "claude-code").is_dir():
        pytest.skip(f"the shared fixtures are not at {FIXTURES}")
    tmp = tmp_path_factory.mktemp("fixtures")
    log = tmp / "decisions.jsonl"
    r = sjc("replay", str(FIXTURES / "claude-code"), home=tmp, SJC_DECISION_LOG=str(log))
    assert r.returncode == 0, r.stderr
    out = tmp / "report" / "fixtures.html"  # a folder that does not exist yet
    r = sjc("audit", "--html", str(out), "--log", str(log), home=tmp)
    assert r.returncode == 0, r.stderr
    return tmp, log, out


@pytest.mark.slow
def test_fixtures_report_is_small_and_lists_every_pruned_entry(fixtures_report):
    _, log, out = fixtures_report
    page = out.read_text()
    assert len(page.encode()) < 300_000, len(page.encode())
    would = sum(rec["pruned"] for _, rec, _ in decision_log.read(log))
    assert would >= 20 and page.count('<div class="entry prune">') == would  # a real workload, every one listed
    assert page.count("Why: score") == would


@pytest.mark.slow
def test_fixtures_report_screenshot(fixtures_report, chromium):
    tmp, log, out = fixtures_report
    dom = browse(chromium, tmp, f"file://{out}")
    t = totals(dom)
    assert t["enforced"] == 0 and t["would"] == sum(rec["pruned"] for _, rec, _ in decision_log.read(log))
    shot = tmp / "fixtures.png"
    browse(chromium, tmp, f"file://{out}", shot=shot)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000
    if os.environ.get("SJC_KEEP_SCREENSHOT"):
        shutil.copy(shot, os.environ["SJC_KEEP_SCREENSHOT"])


@pytest.mark.slow
def test_html_output_paths(small_log, tmp_path):
    log = tmp_path / "d.jsonl"
    made = tmp_path / "new" / "deeper" / "r.html"
    assert sjc("audit", "--html", str(made), "--log", str(log), home=tmp_path).returncode == 0 and made.is_file()
    for target in (tmp_path, small_log / "x.html"):  # a folder; a path under a file
        r = sjc("audit", "--html", str(target), "--log", str(log), home=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("sjc: error:")
