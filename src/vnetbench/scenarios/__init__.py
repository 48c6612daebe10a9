"""Built-in scenarios: campaign YAML files shipped with the package, each repeating a published study.

Each file starts with comment lines `# study: ...` and `# summary: ...` and has a doc in docs/scenarios/.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Scenario:
    name: str
    study: str
    summary: str
    text: str


def _header(text: str, key: str) -> str:
    for line in text.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return ""


def all_scenarios() -> list[Scenario]:
    """Every built-in scenario, by file name."""
    files = sorted(p for p in resources.files(__package__).iterdir() if p.name.endswith(".yaml"))
    out = []
    for path in files:
        text = path.read_text()
        out.append(
            Scenario(path.name.removesuffix(".yaml"), _header(text, "study"), _header(text, "summary"), text)
        )
    return out


def get_scenario(name: str) -> Scenario:
    """The scenario of that name; KeyError naming the known ones otherwise."""
    for scenario in all_scenarios():
        if scenario.name == name:
            return scenario
    known = ", ".join(s.name for s in all_scenarios())
    raise KeyError(f"no scenario named '{name}'; known: {known} (see `vnetbench scenarios list`)")
