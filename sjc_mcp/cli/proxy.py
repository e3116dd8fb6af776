"""``sjc proxy``: serve the model API locally and prune compaction summaries in-band."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

HELP = "serve the model API locally and prune compaction summaries in-band"


def add_arguments(x: argparse.ArgumentParser) -> None:
    x.add_argument("--listen", metavar="HOST:PORT", help="where to listen (default 127.0.0.1:8787)")
    x.add_argument(
        "--upstream",
        metavar="URL",
        help="the API origin to forward to (default: api.anthropic.com for "
        "/v1/messages, api.openai.com for /v1/chat/completions and /v1/responses)",
    )
    x.add_argument("--config", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from sjc_mcp.config import load_config
    from sjc_mcp.proxy.serve import serve

    serve(load_config(args.config), args.listen, args.upstream)
    return 0
