"""End-to-end tests in the real host CLIs. This folder is on ``sys.path`` for them (``hostcli``)."""

from collections.abc import Iterator

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def fake() -> Iterator["object"]:
    """The scripted Anthropic Messages API the Claude Code tests talk to (one per test module)."""
    from cc_fake import FakeClaudeAPI

    f = FakeClaudeAPI()
    yield f
    f.close()
