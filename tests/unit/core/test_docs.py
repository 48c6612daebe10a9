"""The docs name only commands and flags the tools have, and their examples are true.

Every `vnetbench …` and `vnb-probe …` command line in README.md and docs/ (fenced code blocks and
inline code; prose that merely names the tool is not a command) must name an existing command, and
each `--flag` on it must be one of that command's options. Each command named is asked for its
`--help`, which must succeed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TOOLS = ("vnetbench", "vnb-probe")
FENCE = re.compile(r"^```(\w*)\s*$")
INLINE = re.compile(r"`([^`\n]+)`")
SHELL_END = re.compile(r"\s(?:#|\||>|&&|;|2>)|\s\(")  # a comment, a pipe, a redirect, the next command


@dataclass(frozen=True)
class Mention:
    where: str  # file:line
    tool: str
    words: tuple[str, ...]  # the command line after the tool's name


def _command_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every line of a shell-like fenced block and of every inline code span."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line.strip())
        if match:
            fence = None if fence is not None else match.group(1)
            continue
        if fence is not None:
            if fence in ("", "sh", "bash", "shell", "console", "text"):
                out.append((number, line))
            continue
        out += [(number, span) for span in INLINE.findall(line)]
    return out


def mentions(path: Path) -> list[Mention]:
    """Every command line of a tool in a markdown file."""
    found = []
    for number, line in _command_lines(path.read_text()):
        for tool in TOOLS:
            # a line (or span) that runs the tool: after a prompt, sudo, VAR=value or a directory
            start = rf"^\s*(?:\$\s+)?(?:sudo\s+)?(?:[A-Z_]+=\S*\s+)*(?:\S*/)?{re.escape(tool)}"
            for match in re.finditer(start + r"\s+([a-z-]\S*(?:\s.*)?)$", line):
                rest = SHELL_END.split(" " + match.group(1))[0]
                words = tuple(w.strip("[]{}()`,.;:") for w in rest.split())
                found.append(
                    Mention(f"{path.relative_to(ROOT)}:{number}", tool, tuple(w for w in words if w))
                )
    return found


ALL = [m for path in DOCS for m in mentions(path)]


def _vnetbench_command(words: tuple[str, ...]) -> tuple[list[str], Any, list[str]]:
    """The command path the words name, the (click) command, and the flags given to it."""
    command = typer.main.get_command(app)
    path: list[str] = []
    rest = list(words)
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):  # a group: a command
        name = rest.pop(0).split("|")[0]
        sub = command.commands.get(name)
        if sub is None:
            raise AssertionError(
                f"no command '{' '.join([*path, name])}' (known: {sorted(command.commands)})"
            )
        command, path = sub, [*path, name]
    flags = [w.split("=")[0] for w in rest if w.startswith("--")]
    return path, command, flags


def _options(command: Any) -> set[str]:
    return {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}


def test_the_docs_name_commands_at_all():
    tools = {m.tool for m in ALL}
    assert tools == set(TOOLS), f"no command lines found for {set(TOOLS) - tools}: is the extraction broken?"
    assert len(ALL) > 50


@pytest.mark.parametrize("mention", [m for m in ALL if m.tool == "vnetbench"], ids=lambda m: m.where)
def test_every_vnetbench_command_and_flag_in_the_docs_exists(mention: Mention):
    path, command, flags = _vnetbench_command(mention.words)
    unknown = [f for f in flags if f not in _options(command)]
    assert not unknown, f"{mention.where}: vnetbench {' '.join(path)} has no option {unknown}"


def test_every_vnetbench_command_the_docs_name_answers_help():
    paths = {tuple(_vnetbench_command(m.words)[0]) for m in ALL if m.tool == "vnetbench"}
    runner = CliRunner()
    for path in sorted(paths):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, f"vnetbench {' '.join(path)} --help: {result.output}"
    assert len(paths) >= 10


def _probe() -> str | None:
    here = Path(sys.executable).parent / "vnb-probe"
    return str(here) if here.exists() else shutil.which("vnb-probe")


@pytest.mark.skipif(_probe() is None, reason="vnb-probe is not built (make setup)")
def test_every_vnb_probe_command_and_flag_in_the_docs_exists():
    probe = _probe()
    helps: dict[str, str] = {}
    problems = []
    for m in (m for m in ALL if m.tool == "vnb-probe"):
        if not m.words or m.words[0].startswith("-"):
            continue
        sub = m.words[0]
        if sub not in helps:
            run = subprocess.run([probe, sub, "--help"], capture_output=True, text=True, timeout=30)
            helps[sub] = run.stdout if run.returncode == 0 else ""
        if not helps[sub]:
            problems.append(f"{m.where}: vnb-probe has no command '{sub}'")
            continue
        for flag in (w.split("=")[0] for w in m.words[1:] if w.startswith("--")):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[sub]):
                problems.append(f"{m.where}: vnb-probe {sub} has no option {flag}")
    assert not problems, "\n".join(problems)


def test_the_readme_error_example_is_what_the_tool_says():
    """The README shows the error a misspelt rate in its own campaign gets: same line, same words."""
    readme = (ROOT / "README.md").read_text()
    spec = re.search(r"```yaml\n(name: quickstart\n.*?)```", readme, re.S)
    shown = re.search(r"^error: quickstart\.yaml:(\d+): (.*)$", readme, re.M)
    assert spec and shown, "README: the quickstart YAML or its error example is gone"
    text = spec.group(1).replace("rate: 10mbit", "rate: 10mbits")
    assert text != spec.group(1), "README's YAML has no 'rate: 10mbit' to misspell"
    with pytest.raises(SpecInvalid) as caught:
        parse_spec(text, "quickstart.yaml")
    said = [str(e) for e in caught.value.errors]
    assert f"quickstart.yaml:{shown.group(1)}: {shown.group(2)}" in said, said


def test_the_readme_layout_names_every_package_and_top_level_module():
    """The README's "Layout of the code" lists each package of src/vnetbench and each module beside
    them, and nothing that is not there (it lacked palette.py, the bottom layer's colours)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\nsrc/vnetbench/\n(.*?)```", readme, re.S)
    assert block, "README: the layout block (```, src/vnetbench/) is gone"
    listed = set(re.findall(r"^  (\w+/|\w+\.py) ", block.group(1), re.M))
    src = ROOT / "src" / "vnetbench"
    packages = {f"{p.name}/" for p in src.iterdir() if (p / "__init__.py").exists()}
    modules = {p.name for p in src.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert listed == packages | modules


def test_the_readme_layout_names_every_directory_of_tests() -> None:
    """The layout's `tests/` entry names each directory under tests/ (it lacked data/, the captured
    tool outputs and ONL's table the unit tests read)."""
    readme = (ROOT / "README.md").read_text()
    entry = re.search(r"^tests/ +(.*?)\n(?=\S)", readme, re.M | re.S)
    assert entry, "README: the layout's tests/ entry is gone"
    named = set(re.findall(r"(?<![\w/])(\w+)/", entry.group(1)))
    tests = ROOT / "tests"
    dirs = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert dirs <= named, f"README's tests/ entry does not name {sorted(dirs - named)}"


def test_the_readme_layout_names_every_command_of_the_cli() -> None:
    """The layout's `cli/` entry names each command (and each `scenarios` subcommand) the CLI has."""
    readme = (ROOT / "README.md").read_text()
    entry = re.search(r"^  cli/ +(.*?)\n(?=  \S)", readme, re.M | re.S)
    assert entry, "README: the layout's cli/ entry is gone"
    named = set(re.findall(r"[a-z]+", entry.group(1)))
    group = typer.main.get_command(app)
    commands = set(group.commands) | set(group.commands["scenarios"].commands)  # type: ignore[attr-defined]
    assert commands <= named, f"README's cli/ entry does not name {sorted(commands - named)}"
