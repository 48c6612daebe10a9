"""Fixtures every test directory may use: a real PostgreSQL server and a store on each backend; and
the order in which test files reach the parallel workers."""

import pytest

from tests.helpers.postgres import postgres, store_url  # noqa: F401  (pytest fixtures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files marked `slow` (whole campaigns: 30 s to 3 min each) first, longest first, then the rest
    in collection order: with `make test`'s workers (pytest-xdist, one file per worker at a time) the
    longest files start at once instead of last, so the suite does not end waiting on one of them."""

    def expected_seconds(item: pytest.Item) -> float:
        slow = item.get_closest_marker("slow")
        return float(slow.kwargs.get("seconds", 30)) if slow else 0.0

    items.sort(key=lambda item: -expected_seconds(item))
