"""A scorer call's requests handed over as each is scored whole (`Arrivals`), not when the call returns: the
response cache stores them then, so that a run killed in the middle of a long call keeps what was scored."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence

import torch

from pragexp.generation.scoring.requests import EncodedRequest, OptionScore


class Arrivals:
    """Call it with the scorer's results (`(context key, continuation) -> log-likelihood tensor`, a dict that
    only grows) after each pass: `on_scored(i, [OptionScore per option])` for each request whose options are
    all there now, once each, with the scores the call returns for it."""

    def __init__(
        self,
        encoded: Sequence[EncodedRequest],
        key: Callable[[EncodedRequest], Hashable],
        on_scored: Callable[[int, list[OptionScore]], None],
    ):
        self.encoded, self.key, self.on_scored = encoded, key, on_scored
        self.waiting: dict[tuple, list[int]] = {}  # (context key, continuation) -> the requests it completes
        self.left: list[int] = []  # per request, its distinct pairs not scored yet
        for i, e in enumerate(encoded):
            pairs = {(key(e), c) for c in e.continuations}
            self.left.append(len(pairs))
            for pair in pairs:
                self.waiting.setdefault(pair, []).append(i)
        self.seen = 0  # results read so far (the dict keeps its insertion order)

    def __call__(self, results: dict) -> None:
        complete = []
        for pair in itertools.islice(results, self.seen, None):
            for i in self.waiting.pop(pair, ()):
                self.left[i] -= 1
                if self.left[i] == 0:
                    complete.append(i)
        self.seen = len(results)
        if not complete:
            return
        pairs = [(self.key(self.encoded[i]), c) for i in complete for c in self.encoded[i].continuations]
        values = iter(torch.stack([results[p] for p in pairs]).cpu().tolist())  # one copy per pass
        for i in complete:
            e = self.encoded[i]
            self.on_scored(
                i,
                [
                    OptionScore(next(values), len(c), len(t.encode("utf-8")))
                    for c, t in zip(e.continuations, e.texts, strict=True)
                ],
            )
