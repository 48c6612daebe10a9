"""2^(k−p) fractional factorial designs (Jain ch. 19): alias structure and effects by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.fractional import fractional_factorial, multiply, parse_generators, relation
from vnetbench.analysis.inputs import DataError


def half_fraction(y: list[float], reps: int = 1, sign: int = 1) -> pd.DataFrame:
    """2^(4−1) runs in standard order of A, B, C (A fastest), D = ±ABC, levels coded -1/+1."""
    rows = []
    for _ in range(reps):
        for i, (c, b, a) in enumerate(itertools.product([-1, 1], repeat=3)):
            rows.append({"A": a, "B": b, "C": c, "D": sign * a * b * c, "y": y[i]})
    return pd.DataFrame(rows)


# y = 10 + 3A + 2B + AB + 0.5D in the eight runs (A, B, C) = (−−−), (+−−), (−+−), (++−), (−−+), …
# D = ABC: 5.5, 10.5, 8.5, 15.5, 6.5, 9.5, 7.5, 16.5.
Y = [5.5, 10.5, 8.5, 15.5, 6.5, 9.5, 7.5, 16.5]


def test_half_fraction_by_hand() -> None:
    """I = ABCD (resolution IV): q_A estimates A + BCD = 3, q_B = B + ACD = 2, q_AB = AB + CD = 1,
    q_ABC = ABC + D = 0.5, the rest 0. SS = 2^3·q²: 72, 32, 8, 2; SST = 114; A has 63.16 %."""
    r = fractional_factorial(half_fraction(Y), "y", ["A", "B", "C", "D"], ["D=ABC"])
    assert r.defining_relation == ("ABCD",) and r.resolution == 4
    assert r.aliases == {
        "A": "A + BCD", "B": "B + ACD", "C": "C + ABD",
        "AB": "AB + CD", "AC": "AC + BD", "BC": "BC + AD", "ABC": "ABC + D",
    }  # fmt: skip
    q = {e.letters: e.q for e in r.effects.effects}
    assert q == pytest.approx({"I": 10, "A": 3, "B": 2, "C": 0, "AB": 1, "AC": 0, "BC": 0, "ABC": 0.5})
    assert r.effects.sst == pytest.approx(114)
    assert r.effects.effect("A").pct_variation == pytest.approx(100 * 72 / 114)
    assert r.effects.effect("ABC").name == "ABC + D"
    assert r.effects.r == 1 and r.effects.effect("A").significant is None  # no replication: no intervals
    assert r.to_dict()["defining_relation"] == "I = ABCD"


def test_other_half_and_replicated_fraction_gets_intervals() -> None:
    """D = −ABC: I = −ABCD, q_ABC estimates ABC − D = −0.5 with the same y (D's column flipped);
    with r = 2 (the same y plus ±0.1) the errors have 2^3·(2 − 1) = 8 DF and s_q = s_e/√16."""
    y2 = [v + 0.1 for v in Y] + [v - 0.1 for v in Y]
    frame = half_fraction(y2[:8], sign=-1)
    frame = pd.concat([frame, half_fraction(y2[8:], sign=-1)], ignore_index=True)
    r = fractional_factorial(frame, "y", ["A", "B", "C", "D"], ["D=-ABC"])
    assert r.aliases["ABC"] == "ABC − D" and r.to_dict()["defining_relation"] == "I = -ABCD"
    assert r.effects.df_e == 8
    assert r.effects.s_e == pytest.approx(np.sqrt(16 * 0.01 / 8))
    assert r.effects.effect("A").significant is True and r.effects.effect("C").significant is False


def test_quarter_fraction_alias_structure() -> None:
    """2^(5−2) with D = AB, E = AC: I = ABD = ACE = BCDE (ABD·ACE = BCDE), resolution III, and
    A is aliased with A·ABD = BD, A·ACE = CE, A·BCDE = ABCDE."""
    gens = parse_generators(["D=AB", "E=AC"], 5)
    assert [w for w, _ in relation(gens)] == ["ABD", "ACE", "BCDE"]
    assert multiply("A", "BCDE") == "ABCDE"
    rows = []
    for c, b, a in itertools.product([-1, 1], repeat=3):
        rows.append({"A": a, "B": b, "C": c, "D": a * b, "E": a * c, "y": 1.0 + a})
    r = fractional_factorial(pd.DataFrame(rows), "y", list("ABCDE"), ["D=AB", "E=AC"])
    assert r.resolution == 3
    assert r.aliases["A"] == "A + BD + CE + ABCDE"
    assert r.effects.effect("A").q == pytest.approx(1)


@pytest.mark.parametrize(
    ("generators", "match"),
    [
        (["D"], "not a generator"),
        (["D=ABX"], "not a generator"),
        (["D=A"], "two or more basic"),
        (["D=ABC", "C=AB"], "two or more basic"),
    ],
)
def test_bad_generators(generators: list[str], match: str) -> None:
    with pytest.raises(DataError, match=match):
        fractional_factorial(half_fraction(Y), "y", ["A", "B", "C", "D"], generators)


def test_a_row_that_breaks_the_generator_is_named() -> None:
    frame = half_fraction(Y)
    frame.loc[2, "D"] = -frame.loc[2, "D"]
    with pytest.raises(DataError, match="row 3 has D = "):
        fractional_factorial(frame, "y", ["A", "B", "C", "D"], ["D=ABC"])
