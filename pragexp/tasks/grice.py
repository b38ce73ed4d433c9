"""The two GRICE tasks (Zheng et al. 2021): implicature recovery and conversational reasoning QA."""

from __future__ import annotations

import torch.nn.functional as F

from pragexp.metrics import target_rank
from pragexp.models.heads import AnswerClassifier, CandidateRanker
from pragexp.tasks.base import PragexpTask


class GriceRecoveryTask(PragexpTask):
    """Pick the explicit form of the queried round among four candidates: R@1 and MRR."""

    score_names = ("r@1", "mrr")

    def build_network(self, datamodule):
        return CandidateRanker(self.model_factory(vocab_size=datamodule.vocab_size))

    def forward_batch(self, batch):
        logits = self.net(batch["history"], batch["query"], batch["candidates"])
        rank = target_rank(logits, batch["label"])
        return F.cross_entropy(logits, batch["label"]), {"r@1": (rank == 1).float(), "mrr": 1.0 / rank.float()}


class GriceQATask(PragexpTask):
    """Answer a question about the dialogue's world with one word: accuracy over the answer vocabulary."""

    score_names = ("acc",)

    def build_network(self, datamodule):
        return AnswerClassifier(self.model_factory(vocab_size=datamodule.vocab_size), datamodule.num_answers)

    def forward_batch(self, batch):
        logits = self.net(batch["history"], batch["query"])
        correct = (logits.argmax(-1) == batch["label"]).float()
        return F.cross_entropy(logits, batch["label"]), {"acc": correct}



