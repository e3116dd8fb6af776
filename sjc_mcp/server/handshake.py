"""The answers to a host's start-up requests, as the MCP SDK gives them for this very server.

``sjc_mcp.server.front`` answers a host's handshake with them before the SDK is imported (most of a
second). They are made by running the ``MCPServer`` of ``sjc_mcp.server.tools`` through the SDK's own
stdio transport (``generate``): the handshake and every cached list method, and each
``subscriptions/listen`` filter, for every protocol version the SDK speaks. The package ships them
(``data/mcp_handshake.json``; ``python -m sjc_mcp.server.handshake --write`` regenerates it, and a test
keeps it equal to what the SDK answers). They depend on the SDK and pydantic versions (schema
generation), so the packaged file is used only with the versions it was made with; with others, the
first start asks the SDK and keeps its answers in the user cache (``$XDG_CACHE_HOME/sjc``, else
``~/.cache/sjc``) for the next.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
from typing import Any

HANDSHAKE_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "mcp_handshake.json")
# The requests answered from the cache: their results depend on nothing the client sends but the
# protocol version.
CACHED_METHODS = ("ping", "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list")
LISTEN = "subscriptions/listen"
LISTEN_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
SUBSCRIPTION = "sjc-mcp:subscription"  # the listen id in the cached acknowledgements, replaced by the client's
_DISTS = (("mcp", "mcp"), ("pydantic", "pydantic"))


def _dist_version(module: str, dist: str) -> str | None:
    """The installed version of a distribution, from its ``.dist-info`` folder name (no import, no metadata
    parse); else from ``importlib.metadata``."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin and spec.submodule_search_locations is not None:
        site = os.path.dirname(os.path.dirname(spec.origin))
        prefix = dist + "-"
        try:
            names = os.listdir(site)
        except OSError:
            names = []
        found = [
            n[len(prefix) : -len(".dist-info")] for n in names if n.startswith(prefix) and n.endswith(".dist-info")
        ]
        if len(found) == 1:
            return found[0]
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def sdk_versions() -> dict[str, str | None]:
    return {dist: _dist_version(module, dist) for module, dist in _DISTS}


def _user_cache_path(packaged: bytes, versions: dict[str, str | None]) -> str | None:
    from sjc_mcp.paths import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(packaged + json.dumps(versions, sort_keys=True).encode()).hexdigest()[:16]
    return os.path.join(folder, f"mcp-handshake-{key}.json")


def _read_packaged() -> bytes:
    try:
        with open(HANDSHAKE_FILE, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def load_handshake() -> dict[str, Any] | None:
    """The cached answers made with the installed SDK and pydantic, or None."""
    versions = sdk_versions()
    packaged = _read_packaged()
    try:
        data = json.loads(packaged)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("generated_with") == versions:
        return data
    path = _user_cache_path(packaged, versions)
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            cached = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    return cached if isinstance(cached, dict) and cached.get("generated_with") == versions else None


def build_and_cache_handshake() -> dict[str, Any]:
    """Ask the SDK for the answers and keep them in the user cache (best effort)."""
    data = generate()
    path = _user_cache_path(_read_packaged(), data["generated_with"])
    if path is not None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except OSError as exc:
            print(f"sjc-mcp: could not keep the handshake answers in {path}: {exc}", file=sys.stderr)
    return data


def _flag_sets() -> list[tuple[str, ...]]:
    return [tuple(f for i, f in enumerate(LISTEN_FLAGS) if n >> i & 1) for n in range(2 ** len(LISTEN_FLAGS))]


def generate() -> dict[str, Any]:
    """What ``MCPServer`` (``sjc_mcp.server.tools``) answers to the handshake, each cached method and each
    ``subscriptions/listen`` filter, for every protocol version it speaks (imports the SDK)."""
    import anyio
    from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from sjc_mcp.server.tools import create_server

    info = {"name": "sjc-mcp-handshake", "version": "0"}
    answers: dict[str, list[dict[str, Any]]] = {}
    acks: dict[str, list[dict[str, Any]]] = {}
    listen_ends: dict[str, list[dict[str, Any]]] = {}

    def keep(table: dict[str, list[dict[str, Any]]], key: str, version: str, value: Any) -> None:
        same = [a for a in table.setdefault(key, []) if a["value"] == value]
        if same:
            if version not in same[0]["versions"]:
                same[0]["versions"].append(version)
        else:
            table[key].append({"versions": [version], "value": value})

    for version in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS):
        modern = version in MODERN_PROTOCOL_VERSIONS
        msgs: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        if modern:
            envelope = {
                PROTOCOL_VERSION_META_KEY: version,
                CLIENT_INFO_META_KEY: info,
                CLIENT_CAPABILITIES_META_KEY: {},
            }
            params = {"_meta": envelope}
        else:
            init = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
            msgs.append({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init})
            msgs.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
        msgs += [{"jsonrpc": "2.0", "id": m, "method": m, "params": params} for m in CACHED_METHODS]
        if modern:
            for flags in _flag_sets():
                p = {**params, "notifications": dict.fromkeys(flags, True)}
                msgs.append(
                    {"jsonrpc": "2.0", "id": f"{SUBSCRIPTION}:{','.join(flags)}", "method": LISTEN, "params": p}
                )
        ends: dict[Any, dict[str, Any]] = {}
        out = anyio.run(_converse, create_server(), msgs, ends)
        for m in msgs:
            if m.get("method") == LISTEN:
                if "params" not in out[m["id"]] or "error" not in ends.get(m["id"], {}):
                    continue  # refused, or not ended as an error: the SDK's to answer
                ack = copy.deepcopy(out[m["id"]])
                ack["params"]["_meta"][SUBSCRIPTION_ID_META_KEY] = SUBSCRIPTION
                keep(acks, ",".join(m["params"]["notifications"]), version, ack)
                keep(listen_ends, "error", version, ends[m["id"]]["error"])
            elif "id" in m and "result" in out[m["id"]]:
                keep(answers, m["method"], version, out[m["id"]]["result"])
    return {
        "generated_with": sdk_versions(),
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "modern_versions": list(MODERN_PROTOCOL_VERSIONS),
        "envelope": {
            "protocol_version": PROTOCOL_VERSION_META_KEY,
            "client_info": CLIENT_INFO_META_KEY,
            "client_capabilities": CLIENT_CAPABILITIES_META_KEY,
            "subscription_id": SUBSCRIPTION_ID_META_KEY,
        },
        "answers": answers,
        "listen_acks": acks,
        "listen_ends": listen_ends,
    }


async def _converse(
    server: Any, msgs: list[dict[str, Any]], ends: dict[Any, dict[str, Any]] | None = None
) -> dict[Any, dict[str, Any]]:
    """Feed ``msgs`` to the server through the SDK's stdio transport, each after the answer to the one
    before (for ``subscriptions/listen``, its acknowledgement); the answers by request id, and in
    ``ends`` how the SDK ends each listen stream when the input ends."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY

    out: dict[Any, dict[str, Any]] = {}
    ends = {} if ends is None else ends
    answered = anyio.Event()

    class Lines:
        def __aiter__(self) -> Any:
            return self._gen()

        async def _gen(self) -> Any:
            nonlocal answered
            for m in msgs:
                answered = anyio.Event()
                yield json.dumps(m) + "\n"
                if "id" in m:
                    with anyio.fail_after(30):
                        await answered.wait()

    class Collect:
        async def write(self, s: str) -> None:
            msg = json.loads(s)
            if "id" in msg:
                if msg["id"] in out:  # the end of a listen stream, after its acknowledgement
                    ends[msg["id"]] = msg
                    return
                out[msg["id"]] = msg
            elif msg.get("method") == "notifications/subscriptions/acknowledged":
                out[msg["params"]["_meta"][SUBSCRIPTION_ID_META_KEY]] = msg
            else:
                return
            answered.set()

        async def flush(self) -> None:
            pass

    low = server._lowlevel_server
    async with stdio_server(stdin=Lines(), stdout=Collect()) as (read, write):  # type: ignore[arg-type]
        await low.run(read, write, low.create_initialization_options())
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        text = json.dumps(generate(), ensure_ascii=False, indent=1) + "\n"
        with open(HANDSHAKE_FILE, "w", encoding="utf-8") as fh:
            fh.write(text)
        sys.exit(0)
    print("usage: python -m sjc_mcp.server.handshake --write   (regenerates data/mcp_handshake.json)", file=sys.stderr)
    sys.exit(2)
