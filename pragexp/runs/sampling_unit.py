"""What a dataset draws independently: the unit its standard errors, intervals and paired tests are clustered
by.

Rows of one unit (the rounds of one GRICE dialogue, the questions of one PragmatiCQA conversation, the four
language versions of one MultiPragEval scenario, the samples of one intention item) are not independent draws,
so treating each row as its own draw makes every interval too narrow. Each data module declares its unit with
a one-line reason (`sampling_unit`), and each of its examples carries the id of the unit it belongs to
(`"cluster"`); the report names the unit beside every interval ("± 0.021, clustered by conversation, n = 67").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SamplingUnit:
    name: str  # singular noun, as the report prints it: "clustered by <name>"
    reason: str  # one line: why rows of one such unit are not independent draws (or why each row is one)

    def __post_init__(self):
        if not self.name.strip() or not self.reason.strip():
            raise ValueError("a sampling unit needs a name and a one-line reason")

    @property
    def plural(self) -> str:
        """The name as a count says it: `n=67 conversations`, `n=30 stories`."""
        return plural(self.name)


def plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")
