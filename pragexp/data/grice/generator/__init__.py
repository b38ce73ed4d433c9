"""GRICE dialogue grammar generator (Zheng et al., 2021, sec. 3-5).

The CLI is `python -m pragexp.data.grice`.

Levels of the temporal And-Or graph, one module each:
  world.py      conversational context: the simulated world and the woman's knowledge
  grammar/      subtopics -> utterance (implicature) types -> speech templates, one module per subtopic
  lexicon.py    named entities (the official release's lexicon by default)
  discourse.py  temporal chaining of rounds: coreference and follow-ups
  facts.py      meanings (explicit answers, distractors) evaluable in the world
  epistemic.py  what the woman may not know: queries, "not sure" and "don't know" facts
  render.py     facts -> explicit sentences
  distractors.py  the three wrong options of a round (the paper's four strategies)
  qa.py         single-word questions about the world after the dialogue
  dialogue.py   the dialogue-level temporal AOG, split presets, seeding
  writer.py     streaming, atomic JSON writer
  rand.py       cheap seeded choice/sample helpers for hot paths
See ../README.md for the semantics and the choices made.
"""

from pragexp.data.grice.schema import IMPLICATURE_TYPES, SUBTOPICS

from .dialogue import DEFAULT_MIX, SPLIT_PRESETS, TEST_CODES, TEST_TYPES, GeneratedDialogue, GriceGenerator
from .lexicon import load_lexicon
from .writer import write_dataset

# Bump whenever the output for a given seed changes: cached datasets are keyed by it.
GENERATOR_VERSION = "4"

__all__ = [
    "GriceGenerator",
    "GeneratedDialogue",
    "SPLIT_PRESETS",
    "IMPLICATURE_TYPES",
    "SUBTOPICS",
    "DEFAULT_MIX",
    "TEST_CODES",
    "TEST_TYPES",
    "write_dataset",
    "load_lexicon",
    "GENERATOR_VERSION",
]
