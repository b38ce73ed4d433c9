"""Names shared by the GRICE generator and readers."""

IMPLICATURE_TYPES = ("explicit", "relevance", "strengthening", "limiting", "ignorance", "close_but")
SUBTOPICS = ("agent_location", "agent_action", "object_location", "object_scale")
# The official per-type test files are named impl_dial_v0.1_<code>.json and carry the same code
# as `test_condition`.
TEST_CONDITIONS = {
    "re": "relevance",
    "st": "strengthening",
    "li": "limiting",
    "ig": "ignorance",
    "cb": "close_but",
}
