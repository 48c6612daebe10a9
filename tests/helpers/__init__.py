"""Helpers shared by test modules. A test module imports helpers, never another test module or a
conftest. Those that need root and real kernel features live in `helpers/integration/`; unit tests
import none of them (tests/unit/core/test_architecture.py checks both rules)."""
