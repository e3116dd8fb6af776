"""The ``sjc`` command: a thin layer over the library. Heavy modules load only in the command run."""

from __future__ import annotations

import gc
import json
import os
import sys

TYPE_CHECKING = False  # no ``typing`` at run time: a hook event sjc ignores pays only for reading its payload
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any


# What a command leaves for the end of the process instead of freeing it, when the process ends with
# ``run``'s os._exit (which frees nothing): freeing a large audit's records one by one took ~0.1 s of ~0.9.
# None (nothing is kept) when main() is called any other way.
_LEFT_FOR_EXIT: list[object] | None = None


def _leave(*objects: object) -> None:
    if _LEFT_FOR_EXIT is not None:
        _LEFT_FOR_EXIT.extend(objects)


def _parser(**kwargs: Any) -> argparse.ArgumentParser:
    """The parser (argparse is imported here: a hook event never needs it). Bad arguments: one line and
    exit 2, not the usage block."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    return _Parser(**kwargs)


def _add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--summary", metavar="FILE", help="the candidate summary (default: stdin, or the transcript's)")
    p.add_argument("--transcript", metavar="PATH", help="a host transcript: judge one of its compactions")
    p.add_argument("--boundary", type=int, metavar="N", help="which compaction of --transcript (default: newest)")
    p.add_argument("--evidence", metavar="FILE", nargs="*", action="extend", default=[], help="tool output files")
    p.add_argument("--evidence-jsonl", metavar="FILE", help="evidence as JSON lines {kind, name, content}")
    p.add_argument("--previous", metavar="FILE", help="the previous committed summary")
    p.add_argument("--task", metavar="FILE", help="the fixed task prompt the host keeps (not a source)")
    p.add_argument("--host", help="force a summary format: claude-code, codex, gemini, openclaw, hermes, generic")
    p.add_argument("--threshold", type=float, help="prune below this score (default from config: 0.5)")
    p.add_argument("--config", metavar="FILE", help="config file (default $SJC_CONFIG or ~/.config/sjc/config.toml)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _add_eval_args(e: argparse.ArgumentParser) -> None:
    e.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    e.add_argument(
        "--policy",
        choices=["sjc", "paper"],
        default="sjc",
        help="paper: user messages are not a source (as in the paper)",
    )
    e.add_argument(
        "--loo",
        action="store_true",
        help="leave-one-case-out: score each case with lexical weights fitted on the others",
    )
    e.add_argument("--threshold", type=float, help="decision threshold (default from config)")
    e.add_argument(
        "--halves",
        type=int,
        default=0,
        metavar="N",
        help="with --mode tools: choose the threshold on half the transcripts and measure on the other half, N times",
    )
    e.add_argument("--config", metavar="FILE")
    e.add_argument("--json", action="store_true")
    e.add_argument(
        "--mode",
        choices=["summary", "tools"],
        default="summary",
        help="tools: identifier retention of relevance pruning on transcripts (PATH = transcripts)",
    )


def _add_calibrate_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    c.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write weights.json")
    c.add_argument("--policy", choices=["sjc", "paper"], default="sjc")
    c.add_argument("--config", metavar="FILE")


def _add_audit_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--log", metavar="PATH", help="decision log (default from config)")
    a.add_argument("--session", metavar="ID", help="only this session")
    a.add_argument("--since", metavar="DATE", help="only records from this date or time on (ISO 8601)")
    a.add_argument("--json", action="store_true", help="print JSON for scripts")
    a.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (folders are created)")
    a.add_argument("--all", action="store_true", help="terminal: list kept entries too (dim), not only pruned ones")
    a.add_argument(
        "--verify",
        action="store_true",
        help="check the hash chain and its anchor; exit 1 if a record was altered, removed, reordered or cut "
        "from the end",
    )
    a.add_argument("--config", metavar="FILE")


def _add_replay_args(r: argparse.ArgumentParser) -> None:
    r.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders")
    r.add_argument("--config", metavar="FILE")


def _add_tools_args(t: argparse.ArgumentParser) -> None:
    tsub = t.add_subparsers(dest="tools_command", metavar="judge|prune")
    for name, text in (
        ("judge", "score every candidate tool result: still needed for the task?"),
        ("prune", "drop or truncate the tool results no longer needed; print the history"),
    ):
        tp = tsub.add_parser(name, help=text)
        tp.add_argument("--transcript", metavar="PATH", help="a host transcript: the span of one compaction")
        tp.add_argument("--boundary", type=int, metavar="N", help="which compaction (default: newest)")
        tp.add_argument("--messages", metavar="FILE", help="a JSON list of {role, content, name?, call_id?}")
        tp.add_argument("--task", metavar="FILE", help="the task (default: the first user message)")
        tp.add_argument("--config", metavar="FILE")
        tp.add_argument("--json", action="store_true")


def _add_proxy_args(x: argparse.ArgumentParser) -> None:
    x.add_argument("--listen", metavar="HOST:PORT", help="where to listen (default 127.0.0.1:8787)")
    x.add_argument(
        "--upstream",
        metavar="URL",
        help="the API origin to forward to (default: api.anthropic.com for "
        "/v1/messages, api.openai.com for /v1/chat/completions and /v1/responses)",
    )
    x.add_argument("--config", metavar="FILE")


def _add_install_args(i: argparse.ArgumentParser, trust: bool = False) -> None:
    i.add_argument("host", choices=["claude-code", "codex"])
    i.add_argument("--scope", choices=["user", "project"], default="user")
    i.add_argument("--dry-run", action="store_true", help="print the settings it would write; change nothing")
    if trust:
        i.add_argument(
            "--trust",
            action="store_true",
            help="codex: also trust the sjc hooks in $CODEX_HOME/config.toml (Codex skips untrusted hooks)",
        )


def _add_config_path(d: argparse.ArgumentParser) -> None:
    d.add_argument("--config", metavar="FILE")


def _add_config_args(g: argparse.ArgumentParser) -> None:
    g.add_argument("action", choices=["path", "show", "init"])
    g.add_argument("--config", metavar="FILE", help="this file instead of $SJC_CONFIG or the default")
    g.add_argument("--force", action="store_true", help="init: replace an existing file")


def _add_hook_args(h: argparse.ArgumentParser) -> None:
    h.add_argument("host", help="claude-code or codex")
    h.add_argument("--config", metavar="FILE", help="config file")


# Each command: its help line and what adds its arguments, in the order ``sjc --help`` lists them.
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "judge": ("score every summary entry against the evidence", _add_judge_args),
    "prune": ("print the summary with its unsupported entries removed", _add_judge_args),
    "eval": ("measure the judge on labelled provenance cases", _add_eval_args),
    "calibrate": ("fit the offline judge's weights on labelled cases", _add_calibrate_args),
    "audit": ("what the decision log says: pruned entries, savings, warnings", _add_audit_args),
    "replay": ("judge every compaction of recorded transcripts in shadow mode, and log it", _add_replay_args),
    "tools": ("relevance pruning of tool results: judge or prune them", _add_tools_args),
    "proxy": ("serve the model API locally and prune compaction summaries in-band", _add_proxy_args),
    "install": ("add the sjc hooks to a host's settings (with a backup)", lambda i: _add_install_args(i, trust=True)),
    "uninstall": ("take the sjc hooks out of a host's settings", _add_install_args),
    "doctor": ("check the set-up per host: hooks, MCP server, proxy, config, log, judge, index", _add_config_path),
    "config": ("where the config is (path), what is in force (show), a commented start (init)", _add_config_args),
    "hook": ("run as a host hook: the host's hook JSON on stdin (always exits 0)", _add_hook_args),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``command``, of that one alone (a run parses one command's
    arguments, and building all thirteen was ~10 ms of every run's start)."""
    parser = _parser(
        prog="sjc",
        description="Source-Judged Compaction: drop the entries of a compaction summary that no tool "
        "output, user message or previous summary supports.",
    )
    from sjc_mcp import __version__

    parser.add_argument("--version", action="version", version=f"sjc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (text, add) in COMMANDS.items():
        if command is None or name == command:
            add(sub.add_parser(name, help=text))
    return parser


def _first_line(text: str) -> str:
    from sjc_mcp.summary._engine import strip_marker

    return strip_marker(text.split("\n", 1)[0]) if text else ""


def _entry_json(e: Any) -> dict[str, Any]:
    return {
        "id": e.id,
        "section": e.section,
        "text": e.text,
        "score": e.score,
        "decision": e.decision,
        "near_threshold": e.near_threshold,
        "contradicted": e.contradicted,
        "quote": e.quote,
        "origin": e.origin,
        "reason": e.reason,
    }


def _run_judge(args: argparse.Namespace, prune: bool) -> int:
    from sjc_mcp import inputs
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.pipeline import judge_summary, prune_summary

    config = load_config(args.config)
    extra: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    sources = []
    summary = None
    if args.transcript:
        from sjc_mcp.hosts import read_boundary
        from sjc_mcp.log.records import log_nothing
        from sjc_mcp.pipeline import boundary_kwargs

        b = read_boundary(args.transcript, args.boundary)
        meta = {
            "session": b.session_id,
            "boundary": b.index,
            "boundary_id": b.boundary_id,
            "transcript": args.transcript,
        }
        if b.note:
            log_nothing(config, b.note, {**meta, "host": b.host, "op": "prune" if prune else "judge"})
            print(f"sjc: nothing to judge at boundary {b.index}: {b.note}", file=sys.stderr)
            return 0
        summary = b.summary
        sources = b.sources()
        extra = boundary_kwargs(b)
    elif args.boundary is not None:
        raise InputError("--boundary needs --transcript")
    if args.summary is not None or summary is None:
        summary = inputs.read_text(args.summary or "-", "summary")
        meta.setdefault("source", args.summary if args.summary not in (None, "-") else "stdin")
    if summary is None or not summary.strip():
        raise InputError("the summary is empty")
    sources += inputs.evidence_files(args.evidence)
    if args.evidence_jsonl:
        sources += inputs.evidence_jsonl(args.evidence_jsonl)
    previous = inputs.read_text(args.previous, "previous summary")
    task = inputs.read_text(args.task, "task")
    kwargs = {**extra, "host": args.host, "threshold": args.threshold, "config": config, "meta": meta}
    if previous is not None:
        kwargs["previous_summary"] = previous
    if task is not None:
        kwargs["task"] = task
    if prune:
        r = prune_summary(summary, sources, **kwargs)  # type: ignore[arg-type]
        if args.json:
            out = {
                "pruned_summary": r.pruned_summary,
                "entries": [_entry_json(e) for e in r.entries],
                "removed": r.removed,
                "kept": r.kept,
                "chars_before": r.chars_before,
                "chars_after": r.chars_after,
                "threshold": r.threshold,
                "mode": r.mode,
                "judge": r.judge.model_dump(),
                "errors": r.errors,
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            sys.stdout.write(r.pruned_summary)
        from sjc_mcp.audit.view import removal_lines

        for line in removal_lines(r):
            print(f"sjc: {line}", file=sys.stderr)
    else:
        r = judge_summary(summary, sources, **kwargs)  # type: ignore[arg-type]
        if args.json:
            out = {
                "entries": [_entry_json(e) for e in r.entries],
                "threshold": r.threshold,
                "judge": r.judge.model_dump(),
                "mode": r.mode,
                "errors": r.errors,
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            for e in r.entries:
                score = "  -  " if e.score is None else f"{e.score:.2f}"
                first = _first_line(e.text)[:100]
                print(f"{e.decision:8} {score}  [{e.section[:24]}] {first}")
                if e.reason:
                    print(f"{'':15}{e.reason[:300]}")
    for err in r.errors:
        print(f"sjc: {err}", file=sys.stderr)
    return 0


def _run_tools(args: argparse.Namespace) -> int:
    from sjc_mcp import inputs
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.tools import relevance

    if args.tools_command not in ("judge", "prune"):
        raise InputError("say `sjc tools judge` or `sjc tools prune`")
    config = load_config(args.config)
    meta: dict[str, Any] = {"surface": "cli"}
    if args.transcript:
        from sjc_mcp.hosts import read_boundary

        b = read_boundary(args.transcript, args.boundary)
        items = b.span
        meta.update(session=b.session_id, boundary=b.index, boundary_id=b.boundary_id, transcript=args.transcript)
    elif args.messages:
        text = inputs.read_text(args.messages, "messages")
        try:
            data = json.loads(text or "")
        except ValueError:
            raise InputError(f"{args.messages} is not JSON") from None
        items = relevance.messages_from_json(data)
    else:
        raise InputError("give --transcript PATH or --messages FILE")
    task = inputs.read_text(args.task, "task")
    fn = relevance.prune_tool_results if args.tools_command == "prune" else relevance.judge_tool_results
    r = fn(items, config=config, task=task, meta=meta)
    if args.json:
        print(
            json.dumps(
                {
                    "results": [v.model_dump() for v in r.results],
                    "chars_before": r.chars_before,
                    "chars_after": r.chars_after,
                    "tokens_before": r.tokens_before,
                    "tokens_after": r.tokens_after,
                    "tokens_estimated": True,
                    "status": r.status,
                    "judge": r.judge,
                    "errors": r.errors,
                },
                indent=2,
            )
        )
    elif args.tools_command == "prune":
        print(json.dumps([m.model_dump(exclude_none=True) for m in r.messages], indent=1, ensure_ascii=False))
    else:
        for v in r.results:
            score = "-" if v.score is None else f"{v.score:.2f}"
            note = f"  {v.note}" if v.note else ""
            sizes = f"{v.chars_before:>8} -> {v.chars_after:>8} chars"
            print(f"{v.decision:9} {score:>5}  {v.tool or '?':12} {sizes}{note}")
        print(f"{r.status}: tool-result characters {r.chars_before} -> {r.chars_after}", file=sys.stderr)
    for err in r.errors:
        print(f"sjc: {err}", file=sys.stderr)
    return 0


def _run_audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sjc_mcp.audit import summary as audit
    from sjc_mcp.config import load_config

    config = load_config(args.config)
    path = Path(args.log).expanduser() if args.log else config.decision_log_path
    if args.verify:
        from sjc_mcp.log.verify import verify

        count, problems, notes = verify(path)
        for line in problems + notes:
            print(line)
        verdict = "whole: chain intact, anchor matches" if not problems else f"{len(problems)} problem(s)"
        print(f"{path}: {count} records, {verdict}")
        return 1 if problems else 0
    records, corrupt = audit.read_log(path, args.session, args.since)
    for c in corrupt:
        print(f"sjc: {c}", file=sys.stderr)
    report = audit.summarise(records, corrupt, config)
    _leave(records, report)
    if args.html:
        from sjc_mcp.audit.html import write_html

        print(f"wrote {write_html(report, str(path), args.html)}")
        return 0
    if args.json:
        report.pop("scores", None)
        print(json.dumps(report, default=str, ensure_ascii=False))
    else:
        from sjc_mcp.audit.view import render_terminal

        render_terminal(report, show_kept=args.all)
    return 0


def _run_replay(args: argparse.Namespace) -> int:
    from sjc_mcp.audit.replay import replay
    from sjc_mcp.config import load_config

    config = load_config(args.config)
    out = replay(args.paths, config)
    for line in out["skipped"] + out["errors"]:
        print(f"sjc: {line}", file=sys.stderr)
    print(
        f"replayed {out['boundaries']} compactions from {out['files']} files in shadow mode: "
        f"{out['would_prune']} entries would have been pruned; see `sjc audit` (log: {config.decision_log_path})"
    )
    return 0


def _run_eval(args: argparse.Namespace) -> int:
    from sjc_mcp.config import load_config
    from sjc_mcp.errors import InputError
    from sjc_mcp.eval.judge import evaluate, render_text

    config = load_config(args.config)
    if args.threshold is not None:
        if not 0 <= args.threshold <= 1:
            raise InputError(f"threshold must be between 0 and 1, got {args.threshold}")
        config = config.model_copy(update={"threshold": args.threshold})
    if args.mode == "tools":
        from sjc_mcp.eval.tools import identifier_retention
        from sjc_mcp.eval.tools import render_text as render_tools

        out = identifier_retention(args.paths, config, halvings=args.halves)
        print(json.dumps(out, indent=2) if args.json else render_tools(out))
        return 0
    report = evaluate(args.paths, config, policy=args.policy, loo=args.loo)
    print(json.dumps(report, indent=2) if args.json else render_text(report))
    return 0


def _run_calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sjc_mcp.config import load_config
    from sjc_mcp.eval.judge import calibrate

    weights = calibrate(args.paths, load_config(args.config), policy=args.policy)
    out = Path(args.output)
    tmp = out.with_name(f".{out.name}.tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(weights, indent=2, sort_keys=True) + "\n")
    tmp.replace(out)
    print(f"wrote {out}: fitted on {len(weights['fitted_on'])} cases, {weights['entries']} labelled entries")
    return 0


def _hook_args(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """``hook HOST [--config FILE]`` in the plain forms hosts run it (the parser is not built for them:
    every hook event is a process of its own); None for anything else, which the parser reads."""
    args = list(argv)
    if len(args) < 2 or args[0] != "hook" or args[1].startswith("-"):
        return None
    if len(args) == 2:
        return args[1], None
    if len(args) == 3 and args[2].startswith("--config="):
        return args[1], args[2].split("=", 1)[1]
    if len(args) == 4 and args[2] == "--config" and not args[3].startswith("-"):
        return args[1], args[3]
    return None


def main(argv: Sequence[str] | None = None) -> int:
    # A short process that makes many small objects (chunks, passages, lines, words) and frees them by
    # reference counting: the cycle collector runs every 100,000 allocations instead of every 700 (as mypy
    # does); about 10 ms of a 2 MB prune, with the same peak memory.
    gc.set_threshold(100_000, 50, 100)
    quick = _hook_args(sys.argv[1:] if argv is None else argv)
    if quick is not None:  # never fails the host: no exit code but 0, no traceback
        from sjc_mcp.hook import main as hook_main

        return hook_main(*quick)
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(args_in[0] if args_in and args_in[0] in COMMANDS else None)
    args = parser.parse_args(args_in)
    if not args.command:
        parser.print_help()
        return 2
    if args.command == "hook":  # never fails the host: no exit code but 0, no traceback
        from sjc_mcp.hook import main as hook_main

        return hook_main(args.host, args.config)
    from sjc_mcp.errors import SJCError

    try:
        if args.command in ("install", "uninstall"):
            from sjc_mcp.setup import install

            if args.command == "install":
                _, message = install.install(args.host, args.scope, args.dry_run, trust=args.trust)
            else:
                _, message = install.uninstall(args.host, args.scope, args.dry_run)
            print(message)
            return 0
        if args.command == "tools":
            return _run_tools(args)
        if args.command == "doctor":
            from sjc_mcp.setup import doctor

            checks, code = doctor.run(args.config)
            print("\n".join(c.line() for c in checks))
            return code
        if args.command == "config":
            from sjc_mcp.setup import config_file as config_cmd

            if args.action == "init":
                print(config_cmd.init(args.config, force=args.force))
            else:
                print(getattr(config_cmd, args.action)(args.config))
            return 0
        if args.command == "proxy":
            from sjc_mcp.config import load_config
            from sjc_mcp.proxy.app import serve

            serve(load_config(args.config), args.listen, args.upstream)
            return 0
        if args.command == "audit":
            return _run_audit(args)
        if args.command == "replay":
            return _run_replay(args)
        if args.command == "eval":
            return _run_eval(args)
        if args.command == "calibrate":
            return _run_calibrate(args)
        if args.command in ("judge", "prune"):
            return _run_judge(args, prune=args.command == "prune")
        parser.error(f"unknown command {args.command}")
    except SJCError as exc:
        print(f"sjc: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("SJC_DEBUG"):
            raise
        print(f"sjc: internal error: {type(exc).__name__}: {exc} (set SJC_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1
    return 0


def run() -> None:
    """The ``sjc`` command: ``main``, then out without the interpreter's teardown. A run ends with
    hundreds of thousands of small objects (words, lines, passages) that a normal exit frees one by one,
    10-15 ms of a 2 MB prune for nothing. Everything sjc writes goes through files it closes itself; the
    standard streams are flushed and the exit handlers run (the pattern cache is written there) before
    ``os._exit``; a command may leave its largest objects for that end (``_leave``) rather than free them.
    A stream that cannot be flushed (a closed pipe) leaves the normal way."""
    global _LEFT_FOR_EXIT
    _LEFT_FOR_EXIT = []
    code = main()
    if not isinstance(code, int):  # what only sys.exit knows how to report
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
