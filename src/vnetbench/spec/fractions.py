"""The algebra of a 2^(k−p) fractional factorial design's generators (Jain ch. 19), shared by the
spec check, the plan (which runs to make) and the analysis (what each effect is aliased with).

Factors take the letters A, B, C, … in the order they are listed. A generator `D=ABC` makes factor
D's sign the product of A's, B's and C's signs in every run (`D=-ABC`: the other half-fraction); a
factor's first listed level is its −1. Products of effect words drop squared letters (A·A = I).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Generator:
    letter: str  # the generated factor
    word: str  # product of basic letters, e.g. "ABC"
    sign: int  # +1 for D=ABC, −1 for D=-ABC

    def __str__(self) -> str:
        return f"{self.letter}={'-' if self.sign < 0 else ''}{self.word}"


def multiply(a: str, b: str) -> str:
    """Product of two effect words: squared letters vanish (A·A = I), letters in alphabetical order."""
    return "".join(sorted(set(a) ^ set(b), key=LETTERS.index))


def parse_generators(generators: Sequence[str], k: int) -> tuple[Generator, ...]:
    """Parsed generators of a design of k factors; ValueError with what is wrong and the fix."""
    letters = LETTERS[:k]
    out: list[Generator] = []
    for text in generators:
        left, sep, right = text.replace(" ", "").partition("=")
        sign = -1 if right.startswith("-") else 1
        word, left = right.lstrip("+-").upper(), left.upper()
        if (
            not sep
            or len(left) != 1
            or left not in letters
            or not word
            or any(c not in letters for c in word)
        ):
            raise ValueError(
                f"'{text}' is not a generator of factors {', '.join(letters)}: write LETTER=WORD with the "
                "factors' letters in the order they are listed, e.g. D=ABC or D=-ABC"
            )
        out.append(Generator(left, "".join(sorted(set(word), key=LETTERS.index)), sign))
    generated = [g.letter for g in out]
    if len(set(generated)) != len(generated):
        raise ValueError("a factor is generated twice: give each generated factor once")
    for g in out:
        if any(c in generated for c in g.word) or len(g.word) < 2:
            basic = ", ".join(c for c in letters if c not in generated)
            raise ValueError(
                f"{g} must be a product of two or more basic (not generated) factors: use the letters {basic}"
            )
    if k - len(out) < 2:
        raise ValueError(f"{len(out)} generators leave fewer than 2 basic factors: use fewer generators")
    return tuple(out)


def relation(generators: Sequence[Generator]) -> list[tuple[str, int]]:
    """Every word of the defining relation I = …, with its sign, shortest first."""
    words: list[tuple[str, int]] = []
    for size in range(1, len(generators) + 1):
        for combo in itertools.combinations(generators, size):
            word, sign = "", 1
            for g in combo:
                word = multiply(word, g.letter + g.word)
                sign *= g.sign
            words.append((word, sign))
    return sorted(words, key=lambda ws: (len(ws[0]), ws[0]))


def in_fraction(signs: dict[str, int], generators: Sequence[Generator]) -> bool:
    """Whether a run (letter → ±1) satisfies every generator."""
    for g in generators:
        product = g.sign
        for c in g.word:
            product *= signs[c]
        if signs[g.letter] != product:
            return False
    return True


def fraction_runs(levels: Sequence[Sequence[Any]], generators: Sequence[Generator]) -> list[tuple[Any, ...]]:
    """The combinations of two-level factors (first level −1) that belong to the fraction."""
    runs = []
    for combo in itertools.product(*levels):
        signs = {
            LETTERS[i]: -1 if v == lv[0] else 1 for i, (v, lv) in enumerate(zip(combo, levels, strict=True))
        }
        if in_fraction(signs, generators):
            runs.append(combo)
    return runs
