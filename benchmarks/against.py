"""This checkout against another version of sjc, timed in the same rounds: what a change costs or saves.

    python benchmarks/against.py REF            # REF: a git commit, tag or branch of this repository
    python benchmarks/against.py REF --rounds 15

Both are installed as a user installs them (``pip install .`` of the tree, not editable, into throw-away
venvs whose dependencies are this environment's, as ``benchmarks/run.py`` does) and run as processes, round
after round in turn with ``python -c pass``: ``sjc prune --json`` on a 2 MB span with a 150-entry summary,
and a hook event the hook ignores (Claude Code's ``Notification``). A machine's phase moves every figure of
a round together; alternating keeps the comparison fair where one run now and one an hour later does not.
Prints medians; nothing in it is a test.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402  (benchmarks/run.py: the inputs, the launcher)


def export(ref: str, folder: Path) -> Path:
    """The tree of ``ref`` written to ``folder`` (``git archive``): the sources as that commit had them."""
    data = subprocess.run(["git", "-C", str(HERE.parent), "archive", ref], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def install(folder: Path, src: Path = HERE.parent) -> Path:
    """``src`` installed as a user installs it (``run.install_as_user``); its bin folder."""
    python = run.install_as_user(folder, src)
    if python is None:
        raise SystemExit(f"could not install {src} for timing")
    return Path(python).parent


def hook_command(bin_dir: Path) -> list[str]:
    """How that install's hook is run: ``sjc-hook claude-code``, or ``sjc hook claude-code`` before it had one."""
    hook = bin_dir / "sjc-hook"
    return [str(hook), "claude-code"] if hook.exists() else [str(bin_dir / "sjc"), "hook", "claude-code"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("ref", help="the other version: a git commit, tag or branch of this repository")
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        print(f"installing this checkout and {a.ref} …", flush=True)
        this = install(t / "this")
        other = install(t / "other", export(a.ref, t / "src"))
        ev, summ = run.write_inputs(t, 2_000_000, 150)
        env = dict(os.environ, HOME=str(t / "home"), XDG_CACHE_HOME=str(t / "cache"), SJC_DECISION_LOG=str(t / "log"))
        payload = '{"hook_event_name": "Notification", "session_id": "bench", "message": "waiting"}'
        python = str(this / "python")
        cmds = {
            "python -c pass": ([python, "-c", "pass"], ""),
            "ignored hook event, this": (hook_command(this), payload),
            f"ignored hook event, {a.ref}": (hook_command(other), payload),
            "sjc prune --json, this": (
                [str(this / "sjc"), "prune", "--json", "--summary", str(summ), "--evidence-jsonl", str(ev)],
                "",
            ),
            f"sjc prune --json, {a.ref}": (
                [str(other / "sjc"), "prune", "--json", "--summary", str(summ), "--evidence-jsonl", str(ev)],
                "",
            ),
        }
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(a.rounds):
            for name, (cmd, stdin) in cmds.items():
                wall, _peak, code, _out = run.run_child(cmd, env, stdin)
                if code != 0:
                    print(f"{name} failed (exit {code}): {run.LAST_STDERR}")
                    return 1
                times[name].append(wall)
        bare = statistics.median(times["python -c pass"])
        print(f"medians of {a.rounds} rounds, each command in turn:")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"  {name:<40} {med:7.1f} ms  {med / bare:5.2f}x python")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
