"""2^(k−p) fractional factorial designs (Jain ch. 19): k two-level factors in 2^(k−p) runs.

The design is a full 2^(k−p) design of k − p basic factors; each of the p others is generated as a
product of basic columns (`D=ABC`: D's sign is A·B·C's in every run; `D=-ABC` the other half).
Factors take letters A, B, C, … in the order given. The generators define the defining relation
I = D·ABC = ABCD (with p generators, every product of their words), and every column of the sign
table estimates the sum of all the effects in its alias chain: with I = ABCD, q_A estimates
A + BCD, q_AB estimates AB + CD. The resolution is the length of the shortest word of the relation
(III: main effects aliased with two-factor interactions; IV: with three-factor ones).

Effects, sums of squares and (with r ≥ 2) intervals are those of the 2^(k−p) r design of the basic
factors (`two_k_r`), each column labelled with its alias chain.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis.inputs import DataError, Level, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.two_k_r import TwoKRResult, _effects, two_level_coding
from vnetbench.spec.fractions import LETTERS, Generator, multiply, parse_generators, relation

__all__ = ["FractionalResult", "fractional_factorial", "multiply", "parse_generators", "relation", "roman"]


@dataclass(frozen=True)
class FractionalResult:
    factors: tuple[str, ...]
    letters: dict[str, str]  # letter → factor name
    generators: tuple[Generator, ...]
    defining_relation: tuple[str, ...]  # words w with I = ±w, shortest first (sign in `relation_signs`)
    relation_signs: tuple[int, ...]
    resolution: int
    aliases: dict[str, str]  # sign-table column → what its q estimates, e.g. "A + BCD" ("A − BCD")
    effects: TwoKRResult  # the basic design's analysis, columns named by alias chains

    @property
    def p(self) -> int:
        return len(self.generators)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "design": f"2^({len(self.factors)}-{self.p})",
                "factors": {letter: name for letter, name in self.letters.items()},
                "generators": [str(g) for g in self.generators],
                "defining_relation": "I = "
                + " = ".join(
                    f"{'-' if s < 0 else ''}{w}"
                    for w, s in zip(self.defining_relation, self.relation_signs, strict=True)
                ),
                "resolution": roman(self.resolution),
                "aliases": self.aliases,
                "result": self.effects.to_dict(),
            }
        )


def roman(n: int) -> str:
    return {2: "II", 3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII"}.get(n, str(n))


def fractional_factorial(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    generators: Sequence[str],
    confidence: float = 0.95,
    low: Mapping[str, Level] | None = None,
) -> FractionalResult:
    check_confidence(confidence)
    k = len(factors)
    if k > len(LETTERS):
        raise DataError("--factor", f"{k} factors", f"at most {len(LETTERS)}")
    try:
        gens = parse_generators(generators, k)
    except ValueError as exc:
        raise DataError("--generator", str(exc).split(": ", 1)[0], str(exc).split(": ", 1)[-1]) from None
    if not gens:
        raise DataError("--generator", "none given", "a 2^(k-p) design needs p ≥ 1 generators, e.g. D=ABC")
    data = design_frame(frame, response, factors)
    coding = two_level_coding(data, factors, low)
    letter_of = dict(zip(LETTERS, factors, strict=False))
    signs = {LETTERS[i]: np.where(data[f] == coding[f][0], -1, 1) for i, f in enumerate(factors)}
    for g in gens:
        expected = g.sign * np.prod([signs[c] for c in g.word], axis=0)
        bad = np.flatnonzero(signs[g.letter] != expected)
        if bad.size:
            row = int(bad[0])
            raise DataError(
                f"column '{letter_of[g.letter]}'",
                f"row {row + 1} has {letter_of[g.letter]} = {data[letter_of[g.letter]].iloc[row]} (coded "
                f"{signs[g.letter][row]:+d}) where the generator {g} gives {int(expected[row]):+d}",
                "check the generator and the coding (the first level of each factor is −1), or the row",
            )
    basic = [c for c in LETTERS[:k] if c not in {g.letter for g in gens}]
    words = relation(gens)
    aliases: dict[str, str] = {}
    for size in range(1, len(basic) + 1):
        for combo in itertools.combinations(basic, size):
            column = "".join(combo)
            chain = sorted(((multiply(column, w), s) for w, s in words), key=lambda ws: (len(ws[0]), ws[0]))
            aliases[column] = column + "".join(f" {'−' if s < 0 else '+'} {w}" for w, s in chain)
    x = {f"x{i}": signs[c].astype(float) for i, c in enumerate(basic)}
    model = pd.DataFrame({"y": data[response].to_numpy(), **x})
    counts = model.groupby(list(x)).size()
    runs = 2 ** len(basic)
    if len(counts) != runs or counts.nunique() != 1:
        raise DataError(
            "factor",
            f"{len(counts)} of the 2^{len(basic)} = {runs} runs of the basic factors measured, with "
            f"{counts.min()} to {counts.max()} replications",
            "measure every run of the fraction the same number of times",
        )
    result = _effects(
        model,
        response,
        [letter_of[c] for c in basic],
        {letter_of[c]: coding[letter_of[c]] for c in basic},
        confidence,
        int(counts.iloc[0]),
        letters=basic,
        names=aliases,
    )
    return FractionalResult(
        factors=tuple(factors),
        letters={c: letter_of[c] for c in LETTERS[:k]},
        generators=gens,
        defining_relation=tuple(w for w, _ in words),
        relation_signs=tuple(s for _, s in words),
        resolution=min(len(w) for w, _ in words),
        aliases=aliases,
        effects=result,
    )
