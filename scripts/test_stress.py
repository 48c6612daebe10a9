#!/usr/bin/env python3
"""Run the whole test suite several times back to back and say which tests ever failed.

A flaky test costs a landing, so "it passed once" is not enough: this runs `make test`'s two suites
(pytest, then `cargo test` of the probe) N times in a row, then M more times while `stress-ng`
keeps CPUs busy (the way CI's machine may be), and prints one row per run and one row per test that
failed at least once, with how often and the first line of its last failure.

Usage (root, from the repository):
    .venv/bin/python scripts/test_stress.py [--runs 5] [--stressed-runs 3] [--stress-cpus 1]
                                            [--out out/stress] [-- PYTEST-ARGS ...]
or  make test-stress [RUNS=5 STRESSED_RUNS=3 STRESS_CPUS=1]

Exit status 0 when every run passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what `make test` runs (Makefile: PYTEST_ARGS, then the timing tests alone)
MAKE_TEST_PHASES = [
    ["-n", "3", "--dist", "loadfile", "-m", "not timing", "tests"],
    ["-p", "no:xdist", "-m", "timing", "tests"],
]
CARGO_TOTALS = re.compile(
    r"test result: \w+\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored"
)


@dataclass
class RunResult:
    """One pass of both suites."""

    run: int
    stressed: bool
    seconds: float
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: dict[str, str] = field(default_factory=dict)  # test id -> first line of the message


def _testcase_id(case: ET.Element) -> str:
    """pytest's junit classname is the dotted module (plus class); turn it back into a node id."""
    parts = case.get("classname", "").split(".")
    name = case.get("name", "")
    # the module is the longest dotted prefix that names a file
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (ROOT / path).exists():
            return "::".join([str(path), *parts[cut:], name])
    return "::".join([*parts, name])


def parse_junit(path: Path, result: RunResult) -> None:
    """Count pytest's outcomes and keep each failure's first message line."""
    if not path.exists():
        result.failed += 1
        result.failures["pytest"] = "pytest wrote no report (crashed or was killed)"
        return
    for case in ET.parse(path).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            result.failed += 1
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            result.failures[_testcase_id(case)] = message[0][:160] if message else ""
        elif case.find("skipped") is not None:
            result.skipped += 1
        else:
            result.passed += 1


def parse_cargo(output: str, returncode: int, result: RunResult) -> None:
    """Add `cargo test`'s totals (one 'test result:' line per test binary) and its failed tests."""
    for line in output.splitlines():
        line = line.strip()
        totals = CARGO_TOTALS.match(line)
        if totals:
            result.passed += int(totals["passed"])
            result.failed += int(totals["failed"])
            result.skipped += int(totals["ignored"])
        elif line.startswith("test ") and line.endswith("FAILED"):
            result.failures["cargo::" + line[5:].split(" ... ")[0]] = "cargo test failed"
    if returncode != 0 and not any(k.startswith("cargo::") for k in result.failures):
        result.failed += 1
        result.failures["cargo"] = f"cargo test exited {returncode}"


def run_once(n: int, stressed: bool, out: Path, phases: list[list[str]], cargo: bool) -> RunResult:
    """Both suites once (pytest in its phases, as `make test` runs it); output goes to OUT/run-N.*."""
    started = time.monotonic()
    result = RunResult(run=n, stressed=stressed, seconds=0.0)
    for i, pytest_args in enumerate(phases):
        junit = out / f"run-{n}.{i}.xml"
        junit.unlink(missing_ok=True)
        with open(out / f"run-{n}.{i}.pytest.log", "w") as log:
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-rs", f"--junitxml={junit}", *pytest_args],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        parse_junit(junit, result)
    if cargo:
        done = subprocess.run(
            ["cargo", "test", "--release", "--quiet"],
            cwd=ROOT / "probe",
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        (out / f"run-{n}.cargo.log").write_text(done.stdout + done.stderr)
        parse_cargo(done.stdout + done.stderr, done.returncode, result)
    result.seconds = time.monotonic() - started
    return result


def start_stress(cpus: int) -> subprocess.Popen[bytes]:
    """stress-ng keeping CPUS cores busy, in a process group of its own so it stops with us."""
    if shutil.which("stress-ng") is None:
        print("installing stress-ng (Debian package) ...", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "stress-ng"], env=env, check=True)
    return subprocess.Popen(
        ["stress-ng", "--cpu", str(cpus), "--timeout", "0", "--quiet"],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_stress(proc: subprocess.Popen[bytes] | None) -> None:
    """Stop the stress-ng we started (its own process group; nothing else is touched)."""
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def print_summary(results: list[RunResult], total: int) -> None:
    """The run table, then every test that failed at least once."""
    print()
    print(f"{'run':>4}  {'load':<22} {'duration':>9}  {'passed':>6}  {'failed':>6}  {'skipped':>7}")
    for r in results:
        load = "stress-ng --cpu busy" if r.stressed else "as is"
        minutes, seconds = divmod(round(r.seconds), 60)
        took = f"{minutes}m{seconds:02d}s"
        print(f"{r.run:>4}  {load:<22} {took:>9}  {r.passed:>6}  {r.failed:>6}  {r.skipped:>7}")
    tally: Counter[str] = Counter()
    last: dict[str, str] = {}
    for r in results:
        for test, message in r.failures.items():
            tally[test] += 1
            last[test] = message
    print()
    if not tally:
        print(f"no failures in {total} runs")
        return
    print(f"tests that failed (of {total} runs):")
    for test, count in tally.most_common():
        print(f"  {count}/{total}  {test}\n         {last[test]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="runs on the machine as it is (default 5)")
    parser.add_argument("--stressed-runs", type=int, default=3, help="then runs beside stress-ng (default 3)")
    parser.add_argument("--stress-cpus", type=int, default=1, help="CPUs stress-ng keeps busy (default 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "stress", help="logs and summary.json")
    parser.add_argument("--no-cargo", action="store_true", help="pytest only")
    parser.add_argument(
        "pytest_args", nargs="*", help="after --: one pytest run with these (default: make test's two phases)"
    )
    args = parser.parse_args(argv)
    if args.runs < 0 or args.stressed_runs < 0 or args.runs + args.stressed_runs == 0:
        parser.error("--runs and --stressed-runs must be >= 0 and not both 0")
    args.out.mkdir(parents=True, exist_ok=True)
    phases = [args.pytest_args] if args.pytest_args else MAKE_TEST_PHASES
    total = args.runs + args.stressed_runs
    results: list[RunResult] = []
    stress: subprocess.Popen[bytes] | None = None
    try:
        for n in range(1, total + 1):
            stressed = n > args.runs
            if stressed and stress is None:
                stress = start_stress(args.stress_cpus)
            print(f"run {n}/{total}{' (stress-ng)' if stressed else ''} ...", flush=True)
            result = run_once(n, stressed, args.out, phases, not args.no_cargo)
            results.append(result)
            print(f"  {result.passed} passed, {result.failed} failed in {result.seconds:.0f} s", flush=True)
            for test in result.failures:
                print(f"  FAILED {test}", flush=True)
    finally:
        stop_stress(stress)
    print_summary(results, total)
    (args.out / "summary.json").write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
