"""End-to-end tests in the real host CLIs. This folder is on ``sys.path`` for them (``hostcli``)."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)
