"""constraints.txt pins what `make setup` installs: every dependency pyproject.toml names must be
pinned there, at a version its range allows, so a fresh clone installs what CI tested."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[3]


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not pinned with =="
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] + [
        r for extra in project["optional-dependencies"].values() for r in extra
    ]
    return [Requirement(r) for r in names]


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    pins = _pins()
    missing = [str(r) for r in _declared() if canonicalize_name(r.name) not in pins]
    assert not missing, f"not in constraints.txt (run `make constraints`): {missing}"
    outside = [
        f"{r} pinned at {pins[canonicalize_name(r.name)]}"
        for r in _declared()
        if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)
    ]
    assert not outside, f"pinned outside pyproject.toml's range (run `make constraints`): {outside}"


def test_the_venv_has_the_pinned_versions() -> None:
    from importlib.metadata import PackageNotFoundError, version

    wrong = []
    for name, pinned in _pins().items():
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            wrong.append(f"{name}: not installed")
            continue
        if installed != pinned:
            wrong.append(f"{name}: {installed} installed, {pinned} pinned")
    assert not wrong, f"the venv differs from constraints.txt (run `make setup`): {wrong}"
