"""Helpers shared by the test suites (no tests here)."""
