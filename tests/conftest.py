"""Fixtures every test directory may use: a real PostgreSQL server and a store on each backend."""

from tests.helpers.postgres import postgres, store_url  # noqa: F401  (pytest fixtures)
