"""PragmatiCQA (Qi et al. 2023) as a data module: questions in conversations, the passages they are answered
from, and batches for a retrieve-then-read task. The pieces live beside it, one job each:

- `release`: the split files read, and split as `data.splits` says (`released`, or dev and test `carved` out
  of train.jsonl by topic);
- `examples`: one example per question, with its conversation so far and its question type;
- `corpus` (`pages`, `elements`): the passages (`data.corpus`: `sources`, the Fandom HTML archive at
  `data.sources_path`, the paper's; or `spans`, the offline fallback made of the release's own spans), cached
  by a hash of its inputs, and the gold passages of each question;
- `pragexp.retrieval.store`: the passages' embeddings and FAISS index, cached the same way; the corpus and
  the index are built in `prepare_data` (rank 0) and loaded in `setup` on every rank;
- `tokenizers`: the retriever's encoders' tokenizers and the reader's (`data.tokenizer`, i.e.
  `model.pretrained`; null for readers that read no tokens, the oracle and lead baselines), whose text
  handling is the reader's `ReaderText` (`pragexp.prompting.reader_text`). All travel in `state_dict`, hence
  in checkpoints;
- `report`: data_report.json.

The retriever's settings are read once, into `self.retriever` (a `RetrieverSpec`), which the task reads too.

Batches: `PragmatiCQABatch` (`pragexp.batches.types`, where each key is documented; "group": the question
type, "labels": the target `literal </lit> ... pragmatic </prag> ... answer` as token ids).
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from pragexp.batches.types import PragmatiCQABatch
from pragexp.data.common.datamodules.base import SplitsDataModule
from pragexp.data.common.datamodules.declaration import scalars
from pragexp.data.common.splits import SPLITS
from pragexp.data.common.tokens import tokenization as tt
from pragexp.data.pragmaticqa.answer_format import TAGS, format_answer, parse_answer, well_formed
from pragexp.data.pragmaticqa.corpus import Corpus, CorpusSource, community_folders
from pragexp.data.pragmaticqa.examples import QUESTION_TYPES, QAExample, qa_examples
from pragexp.data.pragmaticqa.io import Conversation
from pragexp.data.pragmaticqa.release import Release
from pragexp.data.pragmaticqa.report import data_report
from pragexp.data.pragmaticqa.tokenizers import EncoderTokenizer, RetrievalTokenizers
from pragexp.prompting import PromptItem
from pragexp.prompting.reader_text import ReaderText
from pragexp.retrieval.spec import RetrieverSpec
from pragexp.retrieval.store import PassageIndex, PassageStore
from pragexp.runs.record import DataRecord
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)


class PragmatiCQADataModule(SplitsDataModule):
    group_names: tuple[str, ...] = QUESTION_TYPES
    sampling_unit = SamplingUnit(
        "conversation",
        "a conversation's questions follow one another on one topic, each asked after the last answer",
    )
    format_answer = staticmethod(format_answer)
    parse_answer = staticmethod(parse_answer)
    well_formed = staticmethod(well_formed)
    dataset = "pragmaticqa"
    declared_keys = ("splits", "corpus", "passage_words")

    @classmethod
    def declared(cls, settings: Mapping) -> DataRecord:
        """The release's split files in `path` (those there; carved: train.jsonl, which the splits are cut
        from)."""
        folder = Path(str(settings.get("path") or ""))
        if settings.get("splits") == "carved":
            files = {"all": ["train.jsonl"]}
        else:
            present = [s for s in SPLITS if (folder / f"{s}.jsonl").is_file()] or list(SPLITS)
            files = {s: [f"{s}.jsonl"] for s in present}
        return DataRecord(cls.dataset, "release", files, setting=scalars(settings, cls.declared_keys))

    def __init__(
        self,
        path: str | None = None,
        splits: str = "released",
        carve: dict | None = None,
        corpus: str = "sources",
        sources_path: str | None = None,
        passage_words: int = 100,
        retriever: Mapping | RetrieverSpec | None = None,
        tokenizer: str | None = None,
        max_query_tokens: int = 256,
        max_input_length: int = 512,
        max_target_length: int = 128,
        tiny_vocab_size: int = 3000,
        cache_dir: str = "outputs/cache",
        limit: int | None = None,
        report_dir: str | None = None,
        batch_size: int = 4,
        eval_batch_size: int = 8,
        num_workers: int = 0,
    ):
        super().__init__(batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.release = Release.from_config(path, splits, carve)
        self.source = CorpusSource(corpus, sources_path, int(passage_words))
        self.retriever = RetrieverSpec.from_config(retriever)
        self.tokenizer_name = tokenizer
        self.reader_lengths = {
            "max_query_tokens": int(max_query_tokens),
            "max_input_length": int(max_input_length),
            "max_target_length": int(max_target_length),
        }
        self.tiny_vocab_size = int(tiny_vocab_size)
        self.cache_dir = Path(cache_dir)
        self.examples: dict[str, list[QAExample]] = {}
        self.gold: dict[str, list[tuple[int, ...]]] = {}
        self.corpus: Corpus | None = None
        self.index: PassageIndex | None = None
        self.reader_text: ReaderText | None = None
        self.query_tokenizer: EncoderTokenizer | None = None
        self.saved_index_key: str | None = None
        self.group_of: dict[str, tuple[str, str]] = {}  # community -> (passage group, how it was matched)
        self._retrieval_tokenizers = RetrievalTokenizers(self.tiny_vocab_size)

    # -- corpus and index ---------------------------------------------------------------------------------
    def _corpus_folder(self) -> Path:
        return self.source.folder(self.cache_dir, self.release.files())

    def _store(self, corpus: Corpus) -> PassageStore:
        tokenizer = self._retrieval_tokenizers(self.retriever.encoder("passage"), corpus)
        return PassageStore(
            self.cache_dir / "retrieval",
            corpus.passages,
            corpus.key,
            self.retriever,
            tokenizer,
            {"corpus_kind": corpus.kind},
        )

    def _build(self, conversations: dict[str, list[Conversation]]) -> Corpus:
        """The corpus, its embeddings and its index, each built unless the cache has it."""
        folder = self._corpus_folder()
        self.source.build(folder, [c for convs in conversations.values() for c in convs])
        corpus = Corpus.load(folder)
        self._store(corpus).build()
        return corpus

    # -- Lightning hooks -------------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        self._build(self.release.read()[0])

    def setup(self, stage: str | None = None) -> None:
        if self.corpus is None:
            conversations, reports = self.release.read()
            # Under a Trainer, prepare_data built everything on rank 0 and this finds it in the cache; called
            # outside one (a script, the CLI), it builds what is missing.
            self.corpus = self._build(conversations)
            self.index = self._store(self.corpus).load(self._device())
            if self.saved_index_key and self.saved_index_key != self.index.info["key"]:
                log.warning(
                    "the checkpoint's question encoder was trained against index %s; this run searches %s",
                    self.saved_index_key,
                    self.index.info["key"],
                )
            self._map_communities([c for convs in conversations.values() for c in convs])
            splits, split_info = self.release.split(conversations)
            counts = self._make_examples(splits)
            self.write_report(
                data_report(
                    splits,
                    self.examples,
                    self.gold,
                    reports,
                    split_info,
                    {**self.corpus.report, "cache": self.corpus.key},
                    self.index.info,
                    counts["span_keys_not_in_corpus"],
                    self.group_of,
                )
            )
        self._ensure_tokenizers()
        for split, examples in self.examples.items():
            self.datasets.setdefault(split, [{"index": i, "split": split} for i in range(len(examples))])

    def _device(self) -> torch.device:
        trainer = getattr(self, "trainer", None)
        return trainer.strategy.root_device if trainer is not None else torch.device("cpu")

    def _map_communities(self, everything: Sequence[Conversation]) -> None:
        """Which passage group (`retriever.scope=community`) each community searches: for the archive, the
        folder of its pages (named by the community, else by a topic); for the spans corpus, itself."""
        if self.corpus.kind == "spans":
            self.group_of = {c.community: (c.community, "community") for c in everything}
        else:
            self.group_of = community_folders(sorted({p.group for p in self.corpus.passages}), everything)

    def _make_examples(self, splits: dict[str, list[Conversation]]) -> Counter:
        """Examples and their gold passages, per split; counts what could not be found in the corpus."""
        counts = Counter()
        for split in SPLITS:
            if split in splits:
                self.examples[split] = qa_examples(splits[split])
                self.gold[split] = [
                    self.corpus.gold_passages((*e.literal, *e.pragmatic), counts)
                    for e in self.examples[split]
                ]
        return counts

    def _ensure_tokenizers(self) -> None:
        if self.query_tokenizer is None:
            self.query_tokenizer = self._retrieval_tokenizers(self.retriever.encoder("query"), self.corpus)
        if self.reader_text is None and self.tokenizer_name is not None:
            train = self.examples.get("train")
            texts = None  # read by `tiny` only: trained on the training texts and the passages
            if train is not None:
                texts = itertools.chain(
                    (t for e in train for t in (e.question, e.answer, *e.literal_texts, *e.pragmatic_texts)),
                    (t for p in self.corpus.passages for t in (p.title, p.text)),
                )
            self._set_reader(tt.build_tokenizer(self.tokenizer_name, texts, self.tiny_vocab_size))

    def _set_reader(self, tokenizer) -> None:
        self.reader_text = ReaderText(tokenizer, TAGS, **self.reader_lengths)

    # -- what the task reads ------------------------------------------------------------------------------
    @property
    def query_vocab_size(self) -> int:
        return self.query_tokenizer.vocab_size

    def search_group(self, example: QAExample) -> str:
        return self.group_of.get(example.community, ("", "none"))[0]

    def batch_examples(self, batch: dict) -> list[QAExample]:
        return [self.examples[batch["split"]][int(i)] for i in batch["index"]]

    def describe(self, split: str, index: int) -> dict:
        """The question behind an example, for prediction tables."""
        e = self.examples[split][index]
        return {
            "split": self.release.describe_split(split),
            "topic": e.topic,
            "community": e.community,
            "turn": e.turn,
            "question_type": e.question_type,
            "question": e.question,
            "gold_literal": list(e.literal_texts),
            "gold_pragmatic": list(e.pragmatic_texts),
            "gold_answer": e.answer,
            "gold_passages": list(self.gold[split][index]),
        }

    def missing_split_hint(self, split: str) -> str:
        return f"data.path={self.release.path} has no {split}.jsonl"

    # -- prompts (model=llm) -------------------------------------------------------------------------------
    def prompt_item(self, example: QAExample, passages, index: int, target: str | None = None) -> PromptItem:
        """A question as an LLM reads it: `conversation` (the earlier turns, oldest first, then the question),
        `question`, and `passages` ((title, text) pairs numbered in rank order)."""
        turns = [f"User: {q}\nAssistant: {a}" for q, a in example.history]
        fields = {
            "conversation": "\n".join([*turns, f"User: {example.question}"]),
            "question": example.question,
            "passages": "\n\n".join(f"[{k}] {title}: {text}" for k, (title, text) in enumerate(passages, 1))
            or "(no passage found)",
        }
        return PromptItem(index, fields, target=target)

    def prompt_items(self, split: str) -> list[PromptItem]:
        """Every question of a split with its gold passages and its gold target (the demonstrations)."""
        if split not in self.examples:
            raise ValueError(f"no {split} split: {self.missing_split_hint(split)}")
        passages = self.index.passages
        return [
            self.prompt_item(
                e,
                [(passages[p].title, passages[p].text) for p in self.gold[split][i]],
                i,
                format_answer(e.literal_texts, e.pragmatic_texts, e.answer),
            )
            for i, e in enumerate(self.examples[split])
        ]

    def collate_fn(self):
        return PragmatiCQACollate(self)

    # -- checkpoint -----------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        state = {"corpus": self.source.kind}
        if self.index is not None:
            state["index_key"] = self.index.info["key"]
        if self.query_tokenizer is not None:
            state["query_tokenizer"] = self.query_tokenizer.to_str()
        if self.reader_text is not None:
            state["tokenizer"] = self.reader_text.tokenizer.to_str()
        return state

    def load_state_dict(self, state: dict) -> None:
        from tokenizers import Tokenizer

        if state.get("tokenizer"):
            self._set_reader(Tokenizer.from_str(state["tokenizer"]))
        if state.get("query_tokenizer"):
            length = self.retriever.encoder("query").max_length
            self.query_tokenizer = EncoderTokenizer.from_str(state["query_tokenizer"], length)
        self.saved_index_key = state.get("index_key")


class PragmatiCQACollate:
    """Examples -> a batch: query encoder inputs, gold passages, target ids (with a reader)."""

    def __init__(self, datamodule: PragmatiCQADataModule):
        self.datamodule = datamodule

    def __call__(self, items: list[dict]) -> PragmatiCQABatch:
        dm = self.datamodule
        split = items[0]["split"]
        examples = [dm.examples[split][it["index"]] for it in items]
        batch = PragmatiCQABatch(
            index=torch.tensor([it["index"] for it in items], dtype=torch.long),
            cluster=torch.tensor([e.conversation for e in examples], dtype=torch.long),
            group=torch.tensor([QUESTION_TYPES.index(e.question_type) for e in examples], dtype=torch.long),
            query=dm.query_tokenizer.encode([e.query() for e in examples]),
            split=split,  # the task reads the examples as `datamodule.batch_examples(batch)`
            gold_passages=[dm.gold[split][it["index"]] for it in items],
        )
        if dm.reader_text is not None:
            targets = [
                dm.reader_text.target_ids(format_answer(e.literal_texts, e.pragmatic_texts, e.answer))
                for e in examples
            ]
            labels = torch.full((len(targets), max(map(len, targets))), -100, dtype=torch.long)
            for i, ids in enumerate(targets):
                labels[i, : len(ids)] = torch.tensor(ids)
            batch["labels"] = labels
        return batch
