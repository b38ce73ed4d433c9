"""`llm=reference_true` / `llm=reference_literal`: reply with the dataset's own U2^T or U2^L.

The sanity check of every judge: a judge must find the true reference closer to U2^T (100%) and the
literal one closer to U2^L (0%)."""

from __future__ import annotations

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt, UnsupportedCall

FIELDS = ("reply_true", "reply_literal")


class ReferenceBackend(LLMBackend):
    name = "reference"
    cacheable = False

    def __init__(self, field: str = "reply_true"):
        super().__init__()
        if field not in FIELDS:
            raise ValueError(f"llm.field must be one of {FIELDS}, got {field!r}")
        self.field = field

    def identity(self) -> dict:
        return {"backend": self.name, "field": self.field}

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        missing = [p for p in prompts if self.field not in p.reference]
        if missing:
            raise ValueError(
                f"llm=reference: a prompt carries no {self.field!r} (not built from a dataset item)"
            )
        return [p.reference[self.field] for p in prompts]

    def loglikelihood_many(self, requests):
        raise UnsupportedCall(
            self.name, "loglikelihood", "it only replays the dataset's replies; pick a model"
        )
