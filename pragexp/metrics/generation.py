"""What a generating LLM's answers were like, beside a task's own scores: `GenerationMetric` reads the per-item
records of `model=llm` with `prompt.scoring=generate` (`models.llm.PromptedLLM._generation_record`) and reports

- `unparsed`: the share of items whose answer the reading rules (`prompting.answers`) could not read: an unclosed
  reasoning block, a reply without a clear answer. The same with or without `prompt.extractor`: what the extractor
  recovers is counted apart, never taken out of it;
- `extracted` (with `prompt.extractor`): the share of items (of all of them, so at most `unparsed`) whose answer the
  rules could not read and the extractor did; `unparsed - extracted` is the share scored wrong for want of an
  answer;
- `reasoning_tokens`: the mean number of reasoning tokens per item (0 for a reply without reasoning);
- `forced` (with `prompt.reasoning_budget`): the share of items whose reasoning hit the budget and was closed.

Each dataset index counts once over every rank (`utils.per_example`), as the task's own metrics do.
"""

from __future__ import annotations

import torch
from torchmetrics import Metric

from pragexp.utils.per_example import first_per_index, gathered

FIELDS = ("unparsed", "reasoning_tokens", "forced", "extracted")


class GenerationMetric(Metric):
    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        for name in FIELDS:
            self.add_state(name, default=[], dist_reduce_fx="cat")
        self.add_state("reported", default=torch.zeros(len(FIELDS)), dist_reduce_fx="max")

    def update(self, records: dict[int, dict]) -> None:
        """{dataset index: record}: the records that say how an item was generated (others are left out)."""
        chosen = {i: r for i, r in records.items() if "unparsed" in r}
        if not chosen:
            return
        self.indices.append(torch.tensor(list(chosen), dtype=torch.long, device=self.reported.device))
        for k, name in enumerate(FIELDS):
            values = [float(r.get(name) or 0) for r in chosen.values()]
            getattr(self, name).append(torch.tensor(values, device=self.reported.device))
            if any(name in r for r in chosen.values()):
                self.reported[k] = 1.0

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        if indices.numel() == 0:
            return {}
        _, *columns = first_per_index(indices, *(gathered(getattr(self, n)) for n in FIELDS))
        return {
            name: column.mean()
            for k, (name, column) in enumerate(zip(FIELDS, columns, strict=True))
            if self.reported[k] > 0 or name in ("unparsed", "reasoning_tokens")
        }
