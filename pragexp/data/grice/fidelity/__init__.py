"""How far generated GRICE files are from the official release, template by template.

    python -m pragexp.data.grice.fidelity --official impl_dial_v0.1_{cb,ig,li,re,st}.json \
        --generated test.json [--out report.md] [--json report.json]

Every sentence is abstracted into a *template*: entity words become slots (AGENT, LOC, OBJ, OBJ_SG,
COLOUR, CONT, NUM, PUT/PUT_BASE, GO/GO_BASE, PRON/PRON_OBJ), every other word stays. Then, per
field (round question, answer, explicit form, distractor options, QA question and QA answer):

- coverage: the share of official sentences, weighted by frequency, whose template the generated
  files produce at least once;
- the share of generated sentences whose template the release never shows;
- the most frequent misses on both sides, with an example each;

and the same coverage per test condition (file) and per implicature type x subtopic. Official
rounds carry no type: each gets the type and subtopic the generated rounds with the same
(question, answer, explicit) template carry most often (else the same answer and explicit
templates), or "unlabelled" when no generated round has them.

Also compared: rounds per dialogue, where the rounds of a file's own type sit, the distractor
strategies of a round, pronoun use, and vocabulary (non-slot words).
"""

from .compare import FIELDS, Report, compare, coverage, unseen_share
from .distributions import distractor_strategy
from .markdown import render_markdown
from .templates import Abstractor

__all__ = [
    "FIELDS",
    "Abstractor",
    "Report",
    "compare",
    "coverage",
    "distractor_strategy",
    "render_markdown",
    "unseen_share",
]
