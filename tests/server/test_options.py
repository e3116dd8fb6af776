"""``sjc-mcp``'s command line in this process: ``main`` with bad arguments says one line and returns 2 before
anything of the SDK is imported; ``--help``/``--version``; the options a good command line gives. (The
console script itself, Ctrl-C and the terminal notice: ``test_server_http``.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from sjc_mcp.server import main
from sjc_mcp.server.options import DEFAULT_IDLE_TIMEOUT, DEFAULT_PORT, Options, UsageError, parse_args


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--port", "8000"], "--port only with --transport streamable-http"),
        (["--transport", "sse"], "invalid choice"),
        (["--config", "/nonexistent/sjc.toml"], "no such file"),
        (["--transport", "streamable-http", "--host", "0.0.0.0"], "refusing to serve on 0.0.0.0"),
        (["--transport", "streamable-http", "--host", "10.1.2.3"], "without a bearer token"),
        (["--transport", "streamable-http", "--token-env", "SJC_TEST_UNSET_VAR"], "SJC_TEST_UNSET_VAR"),
        (["--transport", "streamable-http", "--port", "70000"], "not a TCP port"),
        (["--transport", "streamable-http", "--idle-timeout", "0"], "--idle-timeout 0: give seconds"),
        (["--idle-timeout", "5"], "--idle-timeout only with --transport streamable-http"),
        (["--transport", "streamable-http", "--tls-cert", "/etc/hostname"], "--tls-cert and --tls-key go together"),
        (["--tls-cert", "/etc/hostname", "--tls-key", "/etc/hostname"], "--tls-cert, --tls-key only with"),
        (["--transport", "streamable-http", "--tls-cert", "/no/c.pem", "--tls-key", "/no/k.pem"], "no such file"),
    ],
)
def test_bad_command_lines_are_one_line_and_return_2(args, needle, capsys, monkeypatch):
    monkeypatch.delenv("SJC_MCP_TOKEN", raising=False)
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("sjc-mcp: ") and needle in err, err


def test_help_and_version(capsys):
    from sjc_mcp import __version__

    with pytest.raises(SystemExit) as done:
        parse_args(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for flag in (
        "--config",
        "--transport",
        "--host",
        "--port",
        "--token-env",
        "--tokens",
        "--log-dir",
        "--tls-cert",
        "--idle-timeout",
    ):
        assert flag in text
    with pytest.raises(SystemExit) as done:
        parse_args(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"sjc-mcp {__version__}"


def test_the_options_of_a_good_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = tmp_path / "team.toml"
    cfg.write_text("mode = 'shadow'\n")
    assert parse_args([]) == Options()
    got = parse_args(
        ["--transport", "streamable-http", "--port", "9000", "--config", "~/team.toml", "--log-dir", "~/l"]
    )
    assert got == Options(transport="streamable-http", port=9000, config=str(cfg), log_dir=str(tmp_path / "l"))
    assert parse_args(["--transport", "streamable-http"]).port == DEFAULT_PORT
    assert parse_args(["--transport", "streamable-http"]).idle_timeout == DEFAULT_IDLE_TIMEOUT
    assert parse_args(["--transport", "streamable-http", "--idle-timeout", "90"]).idle_timeout == 90
    with pytest.raises(UsageError):
        parse_args(["--host", "127.0.0.1"])


@pytest.mark.slow
def test_the_command_line_imports_no_sdk(tmp_path):
    """A bad command line is answered before the SDK (or pydantic) is imported, and so is a good one parsed."""
    cfg = tmp_path / "c.toml"
    cfg.write_text("mode = 'shadow'\n")
    code = (
        "import sys; from sjc_mcp.server import main, parse_args; "
        f"o = parse_args(['--config', {str(cfg)!r}, '--log-dir', {str(tmp_path)!r}]); rc = main(['--bogus']); "
        "print(o.config, o.log_dir, rc, sorted({'mcp', 'pydantic', 'anyio'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.split() == [str(cfg), str(tmp_path), "2", "[]"]
