"""`llm=scripted_thinker`: a backend without a model that writes a thinking model's replies in the shapes that
matter to the reasoning route (`generation.reasoning.thinking`), for tests and pipeline checks of budgets and
parsing.

Each prompt gets one shape, picked by the prompt's hash (the same every run), then cut at `max_new_tokens`
words (its tokens are words, as for any backend without a tokenizer):
- `brief`: a few words of reasoning, closed, then "The answer is \\boxed{<answer>}.";
- `long`: `long_words` words of reasoning, closed, then "Answer: <answer>" (past a smaller budget: forced);
- `unclosed`: reasoning that forgets its end marker, going on to the token limit;
- `direct`: "Answer: <answer>" and no reasoning.
A prompt that goes on from a forced close (`Prompt.prefill`) is answered " <answer>", or "<answer>}" where the
close opened a box (`\\boxed{`: PragReST's early stop). The answer is one of `answers`, also picked by the
hash.
"""

from __future__ import annotations

import hashlib

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt, UnsupportedCall

SHAPES = ("brief", "long", "unclosed", "direct")


class ScriptedThinker(LLMBackend):
    name = "scripted_thinker"

    def __init__(
        self, answers: tuple[str, ...] = ("yes", "no"), long_words: int = 120, markers=("<think>", "</think>")
    ):
        super().__init__()
        self.answers, self.long_words = tuple(str(a) for a in answers), int(long_words)
        self.markers = tuple(markers)
        if not self.answers:
            raise ValueError("llm.answers: give at least one answer to write")

    def identity(self) -> dict:
        return {
            "backend": self.name,
            "answers": list(self.answers),
            "long_words": self.long_words,
            "markers": list(self.markers),
        }

    def shape(self, prompt: Prompt) -> tuple[str, str]:
        """(shape, answer) of a prompt."""
        digest = int.from_bytes(hashlib.sha256(prompt.text.encode()).digest()[:4], "little")
        return SHAPES[digest % len(SHAPES)], self.answers[(digest // len(SHAPES)) % len(self.answers)]

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        self.calls += 1
        return [self.first_tokens(self._reply(p), params.max_new_tokens) for p in prompts]

    def _reply(self, prompt: Prompt) -> str:
        shape, answer = self.shape(prompt)
        if prompt.prefill:
            return f"{answer}}}" if prompt.prefill.endswith("\\boxed{") else f" {answer}"
        start, end = self.markers
        musing = " ".join(f"step{i}" for i in range(self.long_words))
        if shape == "brief":
            return f"{start}The reply hints at {answer}.{end}\nThe answer is \\boxed{{{answer}}}."
        if shape == "long":
            return f"{start}{musing}{end}\nAnswer: {answer}"
        if shape == "unclosed":
            return f"{start}{musing} {musing}"
        return f"Answer: {answer}"

    def loglikelihood_many(self, requests):
        raise UnsupportedCall(
            self.name, "loglikelihood", "it only writes scripted replies: prompt.scoring=generate"
        )
