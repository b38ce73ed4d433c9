"""What a generating LLM's answers were like, beside a task's own scores: `GenerationMetric` reads the
per-item records of `model=llm` with `prompt.scoring=generate` (`models.llm.PromptedLLM._generation_record`)
and reports

- `unparsed`: the share of items whose answer the reading rules (`prompting.answers`) could not read: an
  unclosed reasoning block, a reply without a clear answer. The same with or without `prompt.extractor`: what
  the extractor recovers is counted apart, never taken out of it;
- `extracted` (with `prompt.extractor`): the share of items (of all of them, so at most `unparsed`) whose
  answer the rules could not read and the extractor did; `unparsed - extracted` is the share scored wrong for
  want of an answer;
- `reasoning_tokens`: the mean number of reasoning tokens per item (0 for a reply without reasoning);
- `forced` (with `prompt.reasoning_budget`): the share of items whose reasoning hit the budget and was closed.

Each is a mean over items, so each comes with its standard error and 95% interval clustered by sampling unit,
as accuracy does (`unparsed_stderr`, `unparsed_ci95_low`, `unparsed_ci95_high`, `unparsed_n`, `unparsed_rows`,
...: pragexp.metrics.uncertainty; the shares' interval that of a share where every item's figure is 0 or 1,
the tokens' mean ± t·SE). Each dataset index counts once over every rank (`utils.per_example`), as the task's
own metrics do.
"""

from __future__ import annotations

import torch
from torchmetrics import Metric

from pragexp.metrics.uncertainty import with_uncertainty
from pragexp.utils.per_example import first_per_index, gathered

FIELDS = ("unparsed", "reasoning_tokens", "forced", "extracted")
COUNTS = ("reasoning_tokens",)  # a mean of counts, never a share


class GenerationMetric(Metric):
    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        self.add_state("clusters", default=[], dist_reduce_fx="cat")
        for name in FIELDS:
            self.add_state(name, default=[], dist_reduce_fx="cat")
        self.add_state("reported", default=torch.zeros(len(FIELDS)), dist_reduce_fx="max")

    def update(
        self, records: dict[int, dict], index: torch.Tensor | None = None, cluster: torch.Tensor | None = None
    ) -> None:
        """{dataset index: record}: the records that say how an item was generated (others are left out).
        `index` and `cluster`: the batch's dataset indices and the sampling unit of each (a record's unit is
        the cluster beside its index; a record without one, or with no `cluster` given, is a unit of its
        own)."""
        chosen = {i: r for i, r in records.items() if "unparsed" in r}
        if not chosen:
            return
        device = self.reported.device
        units = (
            {}
            if index is None or cluster is None
            else dict(zip(index.tolist(), cluster.tolist(), strict=True))
        )
        self.indices.append(torch.tensor(list(chosen), dtype=torch.long, device=device))
        self.clusters.append(torch.tensor([units.get(i, i) for i in chosen], dtype=torch.long, device=device))
        for k, name in enumerate(FIELDS):
            values = [float(r.get(name) or 0) for r in chosen.values()]
            getattr(self, name).append(torch.tensor(values, device=device))
            if any(name in r for r in chosen.values()):
                self.reported[k] = 1.0

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        if indices.numel() == 0:
            return {}
        columns = (gathered(self.clusters, torch.long), *(gathered(getattr(self, n)) for n in FIELDS))
        _, clusters, *values = first_per_index(indices, *columns)
        out = {}
        for k, (name, column) in enumerate(zip(FIELDS, values, strict=True)):
            if self.reported[k] > 0 or name in ("unparsed", "reasoning_tokens"):
                out[name] = column.mean()
                out.update(with_uncertainty(name, column, clusters, share=False if name in COUNTS else None))
        return out
