"""`stats` end to end through a typer app: JSON output, tables, and one-line errors with exit 2."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from tests.helpers.stats_app import ONL, run, run_json

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_tables_on_a_terminal() -> None:
    result = run(ONL, "--response", "loss", "--factor", "receivers")
    assert result.exit_code == 0, result.stderr
    for title in ("ANOVA: loss by receivers", "Effects α_j", "Contrasts with 95 % intervals", "α(6) − α(5)"):
        assert title in result.stdout
    assert "39981.726" in result.stdout and "99.68 %" in result.stdout


def test_sums_of_squares_print_their_significant_digits_only() -> None:
    """docs/examples/gigabit_one_factor.csv: y = 9.4e9 + v, offsets v summing to 1000 with Σv² = 16e6.
    By hand, in integers: SSY = Σy² = 9·(9.4e9)² + 2·9.4e9·1000 + 16e6 = 795 240 018 800 016 000 000,
    SS0 = N·ȳ² = 795 240 018 800 000 111 111.1 and SST = 16e6 − 111 111.1 = 15 888 888.9. To the
    table's 8 significant digits: 795240020000000000000 (both) and 15888889. The float SSY used to be
    printed with every digit of its binary value, 795240018800015966208."""
    rows = (EXAMPLES / "gigabit_one_factor.csv").read_text().split()[1:]
    assert sum(int(r.split(",")[1]) ** 2 for r in rows) == 795_240_018_800_016_000_000  # exact, in integers
    result = run(EXAMPLES / "gigabit_one_factor.csv", "--response", "throughput_bps", "--factor", "cfg")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("795240020000000000000") == 2 and "15888889" in result.stdout
    assert "795240018800015966208" not in result.stdout and "7952400188" not in result.stdout


def test_2kr_json(tmp_path: Path) -> None:
    """The 2^2·2 hand example of test_factorial, through the CSV path."""
    csv = "a,b,y\n-1,-1,2\n-1,-1,4\n1,-1,6\n1,-1,8\n-1,1,3\n-1,1,5\n1,1,11\n1,1,13\n"
    out = run_json(
        write(tmp_path, csv), "--response", "y", "--factor", "a", "--factor", "b", "--design", "2k-r"
    )
    effects = {e["letters"]: e for e in out["result"]["effects"]}
    assert {k: e["q"] for k, e in effects.items()} == pytest.approx({"I": 6.5, "A": 3, "B": 1.5, "AB": 1})
    assert effects["AB"]["significant"] is False
    assert out["result"]["sse"] == pytest.approx(8)
    table = run(write(tmp_path, csv), "--response", "y", "--factor", "a", "--factor", "b", "--design", "2k-r")
    assert "Sign table" in table.stdout and "allocation of variation" in table.stdout


def test_factorial_json(tmp_path: Path) -> None:
    csv = "A,B,y\n" + "".join(
        f"{a},{b},{y}\n"
        for (a, b), ys in {
            ("a1", "b1"): [1, 3],
            ("a1", "b2"): [3, 5],
            ("a2", "b1"): [5, 7],
            ("a2", "b2"): [7, 9],
            ("a3", "b1"): [8, 10],
            ("a3", "b2"): [12, 14],
        }.items()
        for y in ys
    )
    out = run_json(
        write(tmp_path, csv), "--response", "y", "--factor", "A", "--factor", "B", "--design", "factorial"
    )
    assert [t["ss"] for t in out["result"]["terms"]] == pytest.approx([128, 64 / 3, 8 / 3])
    assert out["result"]["df_e"] == 6
    assert "diagnostics" in out


@pytest.mark.parametrize(
    ("csv", "args", "needle"),
    [
        (None, ["--response", "loss", "--factor", "receivers"], "does not exist"),
        (
            "a,y\n1,2\n",
            ["--response", "loss", "--factor", "a"],
            "--response: column 'loss' is not in the table",
        ),
        ("a,y\n1,2\n", ["--response", "y", "--factor", "b"], "--factor: column 'b' is not in the table"),
        ("a,y\n1,2\n1,x\n2,3\n", ["--response", "y", "--factor", "a"], "row 2 of the data holds 'x'"),
        ("a,y\n1,2\n1,3\n", ["--response", "y", "--factor", "a"], "only one level (1)"),
        ("a,y\n1,2\n2,3\n", ["--response", "y", "--factor", "a"], "single observation"),
        ("a,y\n", ["--response", "y", "--factor", "a"], "no rows"),
        # one field too many would shift the columns (pandas made the first column the index)
        (
            "a,y\n1,2\n1,3,9\n2,3\n",
            ["--response", "y", "--factor", "a"],
            ".csv:3: 3 fields, more than the header's 2 (a, y)",
        ),
        (
            "a,b,y\n1,1,2\n2,1\n",
            ["--response", "y", "--factor", "a"],
            ".csv:3: 2 fields, fewer than the header's 3",
        ),
        ("a,y\n1,2\n1,3,\n", ["--response", "y", "--factor", "a"], "remove a trailing comma"),
        ("", ["--response", "y", "--factor", "a"], "not a readable CSV"),
        ("a,y\n1,2\n2,3\n", ["--response", "y", "--factor", "a", "--design", "anova"], "--design: 'anova'"),
        (
            "a,b,y\n1,1,2\n2,2,3\n",
            ["--response", "y", "--factor", "a", "--factor", "b"],
            "exactly one factor",
        ),
        (
            "a,y\n1,2\n2,3\n",
            ["--response", "y", "--factor", "a", "--confidence", "95"],
            "--confidence 95: give",
        ),
    ],
)
def test_user_errors_are_one_line_and_exit_2(
    tmp_path: Path, csv: str | None, args: list[str], needle: str
) -> None:
    path = tmp_path / "missing.csv" if csv is None else write(tmp_path, csv)
    result = run(path, *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in result.stderr


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    result = run(tmp_path, "--response", "y", "--factor", "a")
    assert result.exit_code == 2 and "is not a file" in result.stderr


def test_one_factor_json_has_what_comes_after_the_anova() -> None:
    out = run_json(ONL, "--response", "loss", "--factor", "receivers", "--target-precision", "5%")
    assert out["transform"]["kind"] == "none"
    assert len(out["tukey_hsd"]) == 45 and len(out["adjusted_successive_differences"]) == 9
    assert out["assumptions"]["read"] == "kruskal"
    assert out["level_means"][9]["mean"] == pytest.approx(74.88)
    plan = {t["receivers"]: t for t in out["plan"]["treatments"]}
    assert plan[10]["repetitions_needed"] == 4  # t[0.975; 3]·2.007/2 = 3.19 ≤ 0.05·74.88 = 3.74
    assert out["anova"]["f_note"] is None


def test_two_factor_and_fractional_designs(tmp_path: Path) -> None:
    csv = "A,B,y\nA1,B1,3\nA2,B1,5\nA3,B1,10\nA1,B2,5\nA2,B2,9\nA3,B2,12\n"
    out = run_json(
        write(tmp_path, csv), "--response", "y", "--factor", "A", "--factor", "B", "--design", "two-factor"
    )
    assert [t["f"] for t in out["result"]["terms"]] == pytest.approx([37, 16])  # test_two_factor's hand case
    rows = "".join(
        f"{a},{b},{c},{a * b * c},{10 + 3 * a + 2 * b + a * b + 0.5 * a * b * c}\n"
        for c in (-1, 1) for b in (-1, 1) for a in (-1, 1)
    )  # fmt: skip
    path = write(tmp_path, "A,B,C,D,y\n" + rows, "frac.csv")
    args = ["--response", "y", *("--factor", "A", "--factor", "B", "--factor", "C", "--factor", "D")]
    out = run_json(path, *args, "--design", "2k-p", "--generator", "D=ABC")
    assert out["defining_relation"] == "I = ABCD" and out["resolution"] == "IV"
    assert {e["letters"]: e["q"] for e in out["result"]["effects"]}["A"] == pytest.approx(3)
    table = run(path, *args, "--design", "2k-p", "--generator", "D=ABC")
    assert "ABC + D" in table.stdout and "resolution IV" in table.stdout


def test_log_transform(tmp_path: Path) -> None:
    csv = "f,y\n1,1\n1,2.718281828\n2,7.389056099\n2,20.08553692\n"
    out = run_json(write(tmp_path, csv), "--response", "y", "--factor", "f", "--transform", "log")
    assert out["transform"]["label"] == "log(y)"
    assert out["anova"]["grand_mean"] == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--transform", "sqrt"], "--transform: 'sqrt' is not a transform"),
        (["--generator", "D=ABC"], "--generator: is for --design 2k-p"),
        (["--target-precision", "x"], "--target-precision: 'x' is not a precision"),
        # 150% was refused with only "such as 1% or 0.01", not the range
        (["--target-precision", "150%"], "give a share above 0 and below 100 %, such as 1% or 0.01"),
    ],
)
def test_new_options_refuse_bad_values(tmp_path: Path, args: list[str], needle: str) -> None:
    result = run(write(tmp_path, "f,y\n1,1\n1,2\n2,3\n2,4\n"), "--response", "y", "--factor", "f", *args)
    assert result.exit_code == 2 and needle in result.stderr


def test_full_factorial_as_campaign_files_name_it_is_the_factorial_design(tmp_path: Path) -> None:
    # was: "--design: 'full-factorial' is not a design; use one of one-factor, two-factor, factorial, …"
    from typing import get_args

    from vnetbench.analysis.table_analysis import DESIGN_ALIASES, DESIGNS
    from vnetbench.spec.models import Design

    assert set(get_args(Design.model_fields["kind"].annotation)) <= set(DESIGNS) | set(DESIGN_ALIASES)
    csv = write(tmp_path, "A,B,y\n" + "".join(f"a{a},b{b},{a * 3 + b + r}\n" for a in (1, 2, 3)
                                              for b in (1, 2) for r in (0, 2)))  # fmt: skip
    args = ["--response", "y", "--factor", "A", "--factor", "B"]
    assert run_json(csv, *args, "--design", "full-factorial") == run_json(csv, *args, "--design", "factorial")
    assert run_json(csv, *args, "--design", "full-factorial")["design"] == "factorial"
    result = run(csv, *args, "--design", "anova")
    assert result.stderr == (
        f"error: {csv}: --design: 'anova' is not a design; use one of one-factor, two-factor, factorial "
        "(or full-factorial), 2k-r, 2k-p\n"
    )
    from typer.testing import CliRunner

    from vnetbench.cli import app

    helped = CliRunner().invoke(app, ["stats", "--help"], env={"COLUMNS": "400"})
    assert "one-factor | two-factor | factorial (or full-factorial, as in campaign files) | 2k-r | 2k-p" in (
        helped.stdout
    )


# placement × cc, 2^2·2, text levels (the first to appear is −1): q0 = 76/4 = 19; cell means (same-host, cubic) 11,
# (cross-host, cubic) 21, (same-host, reno) 12, (cross-host, reno) 32. By hand: q_placement =
# (−11 + 21 − 12 + 32)/4 = 7.5, q_cc = (−11 − 21 + 12 + 32)/4 = 3, q_placement:cc = (11 − 21 − 12 + 32)/4
# = 2.5: positive, so the alike cells (same-host, cubic), (cross-host, reno) are the higher ones.
LEVELS_CSV = "placement,cc,y\n" + "".join(
    f"{p},{c},{y}\n"
    for p, c, ys in [("same-host", "cubic", (10, 12)), ("cross-host", "cubic", (20, 22)),
                     ("same-host", "reno", (11, 13)), ("cross-host", "reno", (31, 33))]
    for y in ys
)  # fmt: skip


def test_2kr_effects_name_the_levels_their_sign_compares(tmp_path: Path) -> None:
    """An effect's line said 'A placement 7.5' and the reader could not tell which level was high; it
    names them now, in the table and in --json."""
    path = write(tmp_path, LEVELS_CSV)
    args = (path, "--response", "y", "--factor", "placement", "--factor", "cc", "--design", "2k-r")
    effects = {e["letters"]: e for e in run_json(*args)["result"]["effects"]}
    assert {k: e["q"] for k, e in effects.items()} == pytest.approx({"I": 19, "A": 7.5, "B": 3, "AB": 2.5})
    assert effects["A"]["compares"] == "placement: cross-host − same-host"
    assert effects["B"]["compares"] == "cc: reno − cubic"
    assert effects["AB"]["compares"] == (
        "placement, cc alike − unlike: (same-host, cubic), (cross-host, reno) − (same-host, reno), (cross-host, cubic)"
    )
    assert effects["I"]["compares"] == ""
    table = run(*args)
    assert table.exit_code == 0, table.stderr
    text = " ".join(table.stdout.split())  # the table may wrap a cell at the terminal's width
    assert "placement: cross-host − same-host" in text and "cc: reno − cubic" in text
    assert "q is half that difference of means" in text


def test_level_means_give_the_upper_half_width_and_mark_an_interval_cut_at_0() -> None:
    """ONL's loss at 99 %: the '±' of level 3 (mean 0.0076) printed 0.0076, the mean's distance to the
    interval's lower end after the cut at 0, though its interval is (0 to 2.19). The half-width is
    t[0.995; 40]·s_e/√5 with s_e = √(129.90418/40), from scipy, and a cut interval is marked."""
    from scipy import stats

    half = stats.t.ppf(0.995, 40) * (129.90418 / 40) ** 0.5 / 5**0.5
    result = run(ONL, "--response", "loss", "--factor", "receivers", "--confidence", "0.99")
    assert result.exit_code == 0, result.stderr
    rows = {
        cells[0]: cells[1:] for line in result.stdout.splitlines()
        if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 5
    }  # fmt: skip
    assert rows["3"][:3] == ["5", "0.0076", f"{half:.3g}*"]  # cut at 0: (0 to 0.0076 + 2.18)
    assert rows["10"][:3] == ["5", "74.88", f"{half:.3g}"]  # not cut
    assert "* cut at 0: the response cannot be negative" in " ".join(result.stdout.split())


def test_sd_mean_slope_says_why_it_is_missing(tmp_path: Path) -> None:
    """A line through 2 (log mean, log SD) points always fits: with 2 levels the slope row printed no
    value beside '1: SD ∝ mean (log)', as if it had been estimated. Through the real CLI (a
    subprocess), the row says why; a 3-level table whose level 'z' has SD 0 (log SD undefined)
    likewise; 3 levels of positive mean and SD keep the reading guide."""
    from tests.helpers.cli import cli_quick

    def slope_row(csv: str) -> list[str]:
        result = cli_quick("stats", str(write(tmp_path, csv)), "--response", "y", "--factor", "f")
        assert result.returncode == 0, result.stderr
        rows = [line for line in result.stdout.splitlines() if "slope of log SD on log mean" in line]
        assert len(rows) == 1, result.stdout
        return [c.strip() for c in rows[0].strip("│ ").split("│")]

    two = "f,y\na,0.10\na,0.12\na,0.15\nb,0.30\nb,0.36\nb,0.41\n"
    assert slope_row(two)[1:] == ["", "", "undefined: needs 3 levels or more (this table has 2)"]
    three = "f,y\na,1\na,2\nb,3\nb,5\nz,7\nz,7\n"
    assert (
        slope_row(three)[3]
        == "undefined: needs 3 levels or more with a positive mean and SD (2 of 3 have both)"
    )
    fitted = "f,y\na,1\na,2\nb,3\nb,5\nz,7\nz,10\n"
    # by the standard library: means 1.5, 4, 8.5; SDs √0.5, √2, √4.5 (= 1, 2, 3 × √0.5)
    means, sds = [1.5, 4, 8.5], [math.sqrt(0.5) * k for k in (1, 2, 3)]
    slope = statistics.linear_regression([math.log(m) for m in means], [math.log(s) for s in sds]).slope
    assert slope_row(fitted)[1:] == [f"{slope:.3g}", "", "1: SD ∝ mean (log)"]
    out = run_json(write(tmp_path, two), "--response", "y", "--factor", "f")
    assert out["assumptions"]["sd_mean_slope"] is None
    assert out["assumptions"]["sd_mean_slope_note"] == "undefined: needs 3 levels or more (this table has 2)"
