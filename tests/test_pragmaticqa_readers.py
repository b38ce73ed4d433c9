"""PragmatiCQA's reader adapters (pragexp.tasks.pragmaticqa_readers): each reads a `Reading` the same way,
whatever model is behind it. Models here are stand-ins that record what they were given."""

from dataclasses import dataclass

import torch

from pragexp.data.pragmaticqa.answer_format import format_answer
from pragexp.models.fid import LeadReader, OracleReader
from pragexp.tasks.pragmaticqa_readers import PromptedReader, Reading, SpanReader, TokenReader


@dataclass
class Example:
    literal_texts: tuple[str, ...]
    pragmatic_texts: tuple[str, ...]
    answer: str

    def query(self) -> str:
        return "where is the ferry"


EXAMPLES = [Example(("a ferry.",), ("it has a winch.",), "by the river"), Example(("two carts.",), (), "two")]
PASSAGES = [[("Ferry", "First one. Second one."), None], [None, None]]  # None: fewer than k found


def reading(labels=None) -> Reading:
    return Reading(EXAMPLES, [7, 9], PASSAGES, labels)


def test_a_baseline_writes_its_spans_in_the_target_format_and_has_no_nll():
    oracle, lead = SpanReader(OracleReader(), format_answer), SpanReader(LeadReader(), format_answer)
    assert oracle.target_nll(reading()) is None
    assert oracle.write(reading()) == [
        format_answer(e.literal_texts, e.pragmatic_texts, e.answer) for e in EXAMPLES
    ]
    # the lead reads the passages found, in rank order: none for the second question
    assert lead.write(reading()) == [
        format_answer(["First one."], ["Second one."], "First one. Second one."),
        "",
    ]


class Writer:
    def __init__(self, learns: bool):
        self.learns, self.seen = learns, []

    def write(self, items):
        self.seen.append(("write", items))
        return ["out"] * len(items)

    def target_nll(self, items, targets):
        self.seen.append(("nll", items, targets))
        return torch.ones(len(items)), torch.full((len(items),), 3)


def test_an_llm_reads_prompt_items_and_only_a_tuned_one_is_scored_on_the_target():
    def item(example, passages, index):
        return (example.answer, tuple(title for title, _ in passages), index)

    frozen, tuned = Writer(learns=False), Writer(learns=True)
    assert PromptedReader(frozen, item, format_answer).target_nll(reading()) is None and not frozen.seen
    assert PromptedReader(frozen, item, format_answer).write(reading()) == ["out", "out"]
    items = [("by the river", ("Ferry",), 7), ("two", (), 9)]
    assert frozen.seen == [("write", items)]
    nll, tokens = PromptedReader(tuned, item, format_answer).target_nll(reading())
    targets = [format_answer(e.literal_texts, e.pragmatic_texts, e.answer) for e in EXAMPLES]
    assert tuned.seen == [("nll", items, targets)] and tokens.tolist() == [3, 3]


class Text:
    vocab_size, special_ids = 10, {"pad": 0}

    def __init__(self):
        self.calls = 0

    def inputs(self, queries, passages):
        self.calls += 1
        ids = torch.arange(len(queries) * 2 * 3).reshape(len(queries), 2, 3) % 10
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def decode(self, ids):
        return " ".join(map(str, ids))


class Seq2Seq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(10))

    def forward(self, input_ids, attention_mask, labels):
        return self.weight.expand(*labels.shape, 10)  # uniform logits: NLL log(10) per token

    def generate(self, input_ids, attention_mask, max_new_tokens):
        return input_ids[:, 0, :max_new_tokens]


def test_a_token_reader_tokenises_a_reading_once_for_its_nll_and_its_generation():
    text = Text()
    reader = TokenReader(Seq2Seq(), text, {"max_new_tokens": 2})
    assert reader.target_nll(reading()) is None  # no target ids: nothing to score
    labels = torch.tensor([[1, 2, -100], [3, -100, -100]])
    scored = reading(labels)
    nll, tokens = reader.target_nll(scored)
    assert tokens.tolist() == [2, 1] and torch.allclose(nll, torch.log(torch.tensor(10.0)) * tokens)
    assert reader.write(scored) == ["0 1", "6 7"]
    assert text.calls == 1  # `scored`, once; the reading without target ids was never tokenised
