"""`model=transferred`: a text-pair classifier trained by another pragexp run (`model=bert` on Circa)
answering the items of a choice benchmark that reads prompts (LUDWIG's yes/no pairs): transfer without
training.

Each item's two fields (`fields`: LUDWIG's utterance and response, Circa's question and answer) go through the
run's own tokenizer and network as it was trained, and each option scores the logit of the class `labels` maps
it to (LUDWIG's "yes" and "no" to Circa's "Yes" and "No"): the item is scored by its yes-vs-no logits, the
other classes left out. Nothing learns here: it evaluates without a checkpoint of its own, and the run's
checkpoint is read as data (`pragexp.runs.checkpoint`). It keeps what the task's prompted-model contract asks
(no demonstrations, no generation, records of the logits it read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from hydra.utils import instantiate
from omegaconf import OmegaConf
from tokenizers import Tokenizer

from pragexp.models.traits import ModelTraits, PragexpModel
from pragexp.runs import checkpoint
from pragexp.utils.tensors import encode_batch


class TransferredClassifier(PragexpModel):
    TRAITS = ModelTraits(learns_weights=False, reads_prompts=True)
    shots, generates, learns = 0, False, False

    def __init__(
        self,
        ckpt: str,
        fields: Sequence[str] = ("utterance", "response"),
        labels: Mapping[str, str] | None = None,
        batch_size: int = 64,
        **task_sizes,  # what tasks pass every model: the run's own network decides its sizes
    ):
        super().__init__()
        saved = checkpoint.read(ckpt, setting="model.ckpt")
        tokenizer_json = saved.tokenizer_json()
        if tokenizer_json is None or not saved.model_config:
            raise ValueError(
                f"model.ckpt={ckpt}: not a text classifier's checkpoint (no tokenizer or model config)"
            )
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        config = OmegaConf.create({k: v for k, v in saved.model_config.items() if k != "_partial_"})
        self.label_names = list(saved.datamodule_state().get("label_names") or [])
        self.net = instantiate(
            config, num_labels=len(self.label_names), vocab_size=self.tokenizer.get_vocab_size()
        )
        self.net.load_state_dict(saved.network_weights())
        self.net.eval()
        self.fields, self.batch_size = tuple(fields), int(batch_size)
        self.labels = dict(labels or {"yes": "Yes", "no": "No"})
        unknown = sorted(set(self.labels.values()) - set(self.label_names))
        if unknown:
            raise ValueError(
                f"model.labels names {unknown}, which model.ckpt={ckpt} was not trained on: "
                f"{self.label_names}"
            )
        self.source = str(Path(ckpt))
        self._records: list[tuple[int, dict]] = []

    @torch.no_grad()
    def forward(self, items) -> torch.Tensor:
        """(items, options): each option's score is the logit of the class it names."""
        rows = []
        for start in range(0, len(items), self.batch_size):
            chunk = list(items)[start : start + self.batch_size]
            firsts, seconds = ([i.fields[f] for i in chunk] for f in self.fields)
            inputs = {
                k: v.to(self.net.head.weight.device)
                for k, v in encode_batch(self.tokenizer, firsts, seconds).items()
            }
            logits = self.net(**inputs).float().cpu()
            for item, row in zip(chunk, logits, strict=True):
                columns = [self.label_names.index(self.labels[o]) for o in item.options]
                rows.append(row[columns])
                record = {
                    "logits": {
                        name: round(float(v), 6) for name, v in zip(self.label_names, row, strict=True)
                    }
                }
                self._records.append((item.index, {**record, "transferred_from": self.source}))
        return torch.stack(rows)

    def demonstrate(self, training_items) -> None:
        """A trained classifier is shown no demonstrations."""

    def take_records(self) -> list[tuple[int, dict]]:
        records, self._records = self._records, []
        return records

    def save_adapter(self, folder) -> None:
        return None
