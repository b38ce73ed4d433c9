"""PragmatiCQA (Qi et al. 2023) as a data module: questions in conversations, a passage corpus and its
dense index, and the inputs of a Fusion-in-Decoder reader.

Splits (`data.splits`):
- `released`: `data.path` holds the release's train.jsonl, val.jsonl and test.jsonl (any may be absent:
  evaluating a checkpoint needs only the test file);
- `carved`: only train.jsonl is used; dev and test are carved out of it by topic (topics stay disjoint,
  as in the release), `carve.val` and `carve.test` of its questions each, drawn with `carve.seed`. Every
  output says so (the config, data_report.json, the log).

Corpus (`data.corpus`, see `corpus`): `sources`, the Fandom HTML archive at `data.sources_path` (the
paper's), or `spans`, the offline fallback made of the release's own spans. It is built once and cached
by a hash of its inputs, as are the passage embeddings and the FAISS index (`pragexp.retrieval.store`):
built in `prepare_data` (rank 0), loaded in `setup` on every rank.

Tokenizers. `tokenizer` names the reader's (`model.pretrained`: a hub name, `minilm`, or `tiny`, trained
here on the training texts; null for readers that read no tokens, the oracle and lead baselines); `</lit>`
and `</prag>` are added to it as special tokens. The retriever's encoders bring their own (`tiny` is
trained on the corpus). Both travel in `state_dict`, hence in checkpoints.

Batches: `index`, `group` (question type), `query` (the question encoder's inputs), `labels` (the target
`literal </lit> ... pragmatic </prag> ... answer` as token ids, -100 as padding; with a reader tokenizer),
and the split's name (`split`: the task reads the examples through `batch_examples`). The task retrieves passages with the question
encoder and asks `reader_inputs` for the reader's (question, passage) token ids.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path

import torch
from tokenizers import Tokenizer

from pragexp.data.common import tokenization as tt
from pragexp.data.common.datamodule import SplitsDataModule
from pragexp.data.common.splits import SPLITS, carve_groups
from pragexp.data.pragmaticqa import corpus as corpus_lib
from pragexp.data.pragmaticqa.answer_format import TAGS, format_answer, parse_answer
from pragexp.data.pragmaticqa.examples import QUESTION_TYPES, QAExample, qa_examples
from pragexp.data.pragmaticqa.io import Conversation, read_conversations, split_files
from pragexp.retrieval import store
from pragexp.retrieval.encoders import RETRIEVER_HINT, build_encoder, encode_texts
from pragexp.retrieval.index import IndexSpec
from pragexp.utils.io import atomic_directory, digest, file_digest
from pragexp.utils.pretrained_names import TINY

log = logging.getLogger(__name__)

SPLIT_MODES = ("released", "carved")
PAPER_QAS = {"train": 4027, "val": 1479, "test": 1367}  # Table 2 (the release itself holds 3,722/1,526/1,576)


class PragmatiCQADataModule(SplitsDataModule):
    def __init__(
        self,
        path: str | None = None,
        splits: str = "released",
        carve: dict | None = None,
        corpus: str = "sources",
        sources_path: str | None = None,
        passage_words: int = 100,
        retriever: dict | None = None,
        tokenizer: str | None = None,
        max_query_tokens: int = 256,
        max_input_length: int = 512,
        max_target_length: int = 128,
        tiny_vocab_size: int = 3000,
        cache_dir: str = "outputs/cache",
        report_dir: str | None = None,
        batch_size: int = 4,
        eval_batch_size: int = 8,
        num_workers: int = 0,
    ):
        super().__init__(batch_size, eval_batch_size, num_workers, report_dir)
        if splits not in SPLIT_MODES:
            raise ValueError(f"data.splits={splits}: one of {', '.join(SPLIT_MODES)}")
        if corpus not in corpus_lib.CORPUS_KINDS:
            raise ValueError(f"data.corpus={corpus}: one of {', '.join(corpus_lib.CORPUS_KINDS)}")
        self.path, self.split_mode = path, splits
        self.carve = {"val": 0.15, "test": 0.15, "seed": 0, **(carve or {})}
        self.corpus_kind, self.sources_path, self.passage_words = corpus, sources_path, int(passage_words)
        self.retriever = dict(retriever or {})
        self.index_spec = IndexSpec(**dict(self.retriever.get("index") or {}))
        self.scope = self.retriever.get("scope", "all")
        if self.scope not in ("all", "community"):
            raise ValueError(f"retriever.scope={self.scope}: all or community")
        self.tokenizer_name = tokenizer
        self.max_query_tokens, self.max_input_length = int(max_query_tokens), int(max_input_length)
        self.max_target_length, self.tiny_vocab_size = int(max_target_length), int(tiny_vocab_size)
        self.cache_dir = Path(cache_dir)
        self.group_names: tuple[str, ...] = QUESTION_TYPES
        self.examples: dict[str, list[QAExample]] = {}
        self.gold: dict[str, list[tuple[int, ...]]] = {}
        self.corpus: corpus_lib.Corpus | None = None
        self.index: store.PassageIndex | None = None
        self.reader_tokenizer = None
        self.query_tokenizer = None
        self.saved_index_key: str | None = None
        self._tokenizer_bases: dict[tuple[str, str], Tokenizer] = {}  # (encoder, corpus) -> loaded or trained
        self.group_of: dict[str, tuple[str, str]] = {}  # community -> (passage group, how it was matched)
        self.report: dict = {}

    # -- reading ------------------------------------------------------------------------------------------
    def _files(self) -> dict[str, Path]:
        if not self.path:
            raise ValueError(
                "set data.path=/path/to/PragmatiCQA/data (the folder holding train.jsonl, val.jsonl, test.jsonl)"
            )
        files = split_files(self.path)
        if not files:
            raise FileNotFoundError(f"data.path={self.path}: no train.jsonl, val.jsonl or test.jsonl there")
        return files

    def _read_all(self) -> tuple[dict[str, list[Conversation]], dict[str, dict]]:
        conversations, reports = {}, {}
        for split, file in self._files().items():
            conversations[split], report = read_conversations(file)
            reports[split] = report.as_dict()
        return conversations, reports

    def _split(
        self, conversations: dict[str, list[Conversation]]
    ) -> tuple[dict[str, list[Conversation]], dict]:
        if self.split_mode == "released":
            return conversations, {"splits": "released", "files": sorted(conversations)}
        if "train" not in conversations:
            raise FileNotFoundError(f"data.splits=carved needs {Path(self.path) / 'train.jsonl'}")
        train = conversations["train"]
        fractions = {"val": float(self.carve["val"]), "test": float(self.carve["test"])}
        parts = carve_groups(
            [c.topic for c in train], fractions, int(self.carve["seed"]), weights=[len(c.qas) for c in train]
        )
        carved = {split: [train[i] for i in parts[split]] for split in SPLITS}
        note = (
            f"dev and test carved out of {Path(self.path) / 'train.jsonl'} by topic (val {fractions['val']}, "
            f"test {fractions['test']} of its questions, seed {self.carve['seed']}); not the released val/test"
        )
        return carved, {
            "splits": "carved",
            "note": note,
            "topics": {s: sorted({c.topic for c in carved[s]}) for s in SPLITS},
        }

    # -- corpus, embeddings, index --------------------------------------------------------------------------
    def _corpus_dir(self) -> Path:
        """Where the corpus is cached: under a hash of what goes into it."""
        if self.corpus_kind == "spans":
            inputs = {"corpus": "spans", "files": {s: file_digest(f) for s, f in self._files().items()}}
        else:  # the archive alone: the same corpus whatever data files are read with it
            sources = corpus_lib.check_archive(self.sources_path)
            inputs = {
                "corpus": "sources",
                "pages": corpus_lib.archive_manifest(sources),
                "passage_words": self.passage_words,
            }
        return (
            self.cache_dir / "pragmaticqa" / "corpus" / digest({"version": 2, **inputs})
        )  # 2: wordless pages map no elements

    def _build_corpus(self, folder: Path, everything: Sequence[Conversation]) -> None:
        if (folder / "corpus.json").is_file():
            return
        log.info("building the %s corpus in %s", self.corpus_kind, folder)
        with atomic_directory(folder) as tmp:
            if self.corpus_kind == "spans":
                corpus_lib.build_spans_corpus(everything, tmp)
            else:
                archive = corpus_lib.check_archive(self.sources_path)
                corpus_lib.build_sources_corpus(archive, tmp, self.passage_words)

    def _retrieval_tokenizer(self, name: str, max_length: int, corpus: corpus_lib.Corpus):
        """The encoder's tokenizer, loaded (or trained) once per corpus; each caller gets its own copy, cut
        at its own length."""
        base = self._tokenizer_bases.get((name, corpus.key))
        if base is None:
            if name == TINY:  # trained on the corpus, so both sides of the tiny bi-encoder share it
                texts = [t for p in corpus.passages for t in (p.title, p.text)]
                base = tt.train_wordpiece(texts, vocab_size=self.tiny_vocab_size)
            else:
                base = tt.load_pretrained_tokenizer(name, RETRIEVER_HINT)
            self._tokenizer_bases[(name, corpus.key)] = base
        return tt.configure(Tokenizer.from_str(base.to_str()), max_length)

    def _encoder_spec(self, side: str) -> store.EncoderSpec:
        return store.EncoderSpec(
            name=self.retriever.get(f"{side}_encoder", "minilm"),
            pooling=self.retriever.get("pooling", "mean"),
            normalize=bool(self.retriever.get("normalize", True)),
            max_length=int(self.retriever.get(f"max_{side}_length", 256 if side == "passage" else 128)),
        )

    def _index_dirs(self, corpus: corpus_lib.Corpus) -> tuple[Path, Path, store.EncoderSpec]:
        spec = self._encoder_spec("passage")
        tokenizer = self._retrieval_tokenizer(spec.name, spec.max_length, corpus)
        embeddings = store.embeddings_key(corpus.key, spec, digest(tokenizer.to_str()))
        root = self.cache_dir / "retrieval"
        return (
            root / "embeddings" / embeddings,
            root / "index" / store.index_key(embeddings, self.index_spec),
            spec,
        )

    def _build_index(self, corpus: corpus_lib.Corpus) -> None:
        embeddings_dir, index_dir, spec = self._index_dirs(corpus)
        if not (embeddings_dir / "info.json").is_file():
            tokenizer = self._retrieval_tokenizer(spec.name, spec.max_length, corpus)
            encoder = build_encoder(
                spec.name, spec.pooling, spec.normalize, vocab_size=tokenizer.get_vocab_size()
            )
            device = "cuda" if torch.cuda.is_available() else "cpu"
            batch = int(self.retriever.get("encode_batch_size", 128))
            log.info("encoding %d passages with %s on %s", len(corpus.passages), spec.name, device)
            store.build_embeddings(
                embeddings_dir,
                corpus.passages,
                lambda texts, out: encode_texts(
                    encoder, partial(_encode_pairs, tokenizer), texts, out, batch, device
                ),
                encoder.dim,
                {"corpus": corpus.key, "corpus_kind": corpus.kind, "encoder": asdict(spec)},
            )
            del encoder
        store.build_index_entry(index_dir, embeddings_dir, self.index_spec)

    def _load_index(self, corpus: corpus_lib.Corpus) -> store.PassageIndex:
        embeddings_dir, index_dir, _ = self._index_dirs(corpus)
        if not (index_dir / "info.json").is_file():
            raise FileNotFoundError(f"no index at {index_dir}: prepare_data() builds it (rank 0)")
        trainer = getattr(self, "trainer", None)
        root = trainer.strategy.root_device if trainer is not None else torch.device("cpu")
        index = store.load_index(
            index_dir,
            embeddings_dir,
            self.index_spec,
            self.retriever.get("gpu", "auto") if root.type == "cuda" else False,
            device=root.index or 0,
        )
        info = {"embeddings": str(embeddings_dir), "index": str(index_dir), "key": index_dir.name}
        return store.PassageIndex(corpus.passages, store.load_embeddings(embeddings_dir), index, info)

    # -- Lightning hooks --------------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        conversations, _ = self._read_all()
        everything = [c for convs in conversations.values() for c in convs]
        folder = self._corpus_dir()
        self._build_corpus(folder, everything)
        self._build_index(corpus_lib.Corpus.load(folder))

    def setup(self, stage: str | None = None) -> None:
        if self.corpus is None:
            conversations, reports = self._read_all()
            folder = self._corpus_dir()
            if not (folder / "corpus.json").is_file():
                self.prepare_data()  # called outside a Trainer (a script, the CLI)
            self.corpus = corpus_lib.Corpus.load(folder)
            self.index = self._load_index(self.corpus)
            if self.saved_index_key and self.saved_index_key != self.index.info["key"]:
                log.warning(
                    "the checkpoint's question encoder was trained against index %s; this run searches %s",
                    self.saved_index_key,
                    self.index.info["key"],
                )
            everything = [c for convs in conversations.values() for c in convs]
            self._map_communities(everything)
            splits, split_info = self._split(conversations)
            self._make_examples(splits, reports, split_info)
            self.write_report(self.report)
        self._ensure_tokenizers()
        for split, examples in self.examples.items():
            self.datasets.setdefault(split, [{"index": i, "split": split} for i in range(len(examples))])

    def _map_communities(self, everything: Sequence[Conversation]) -> None:
        """Which passage group (`retriever.scope=community`) each community searches: for the archive, the
        folder of its pages (named by the community, else by a topic); for the spans corpus, itself."""
        if self.corpus.kind == "spans":
            self.group_of = {c.community: (c.community, "community") for c in everything}
        else:
            folders = sorted({p.group for p in self.corpus.passages})
            self.group_of = corpus_lib.community_folders(folders, everything)

    def search_group(self, example: QAExample) -> str:
        return self.group_of.get(example.community, ("", "none"))[0]

    def _make_examples(self, splits: dict[str, list[Conversation]], reports: dict, split_info: dict) -> None:
        counts = Counter()
        for split in SPLITS:
            if split not in splits:
                continue
            self.examples[split] = qa_examples(splits[split])
            self.gold[split] = [
                self.corpus.gold_passages((*e.literal, *e.pragmatic), counts) for e in self.examples[split]
            ]
        sizes = {
            s: {
                "conversations": len(splits[s]),
                "qas": len(self.examples[s]),
                "topics": len({c.topic for c in splits[s]}),
                "qas_with_gold_passages": sum(bool(g) for g in self.gold[s]),
                "question_types": dict(Counter(e.question_type for e in self.examples[s]).most_common()),
            }
            for s in self.examples
        }
        # The release keeps topics apart; a file that does not is worth knowing about. Communities are not
        # kept apart (train and val share Hamilton the Musical and Wizard of Oz): their wiki pages then
        # serve both splits, which a researcher should know when reading dev figures.
        shared = {
            plural: _in_more_than_one_split(
                {s: {getattr(c, field) for c in splits[s]} for s in self.examples}
            )
            for field, plural in (("topic", "topics"), ("community", "communities"))
        }
        for plural, values in shared.items():
            if values:
                log.warning("PragmatiCQA: %s in more than one split: %s", plural, "; ".join(values))
        self.report = {
            "data": "pragmaticqa",
            **split_info,
            **{f"{plural}_in_more_than_one_split": values for plural, values in shared.items()},
            "files": reports,
            "split_sizes": sizes,
            "paper_table2_qas": PAPER_QAS,
            "corpus": {**self.corpus.report, "cache": self.corpus.key},
            "index": self.index.info,
            "span_keys_not_in_corpus": counts["span_keys_not_in_corpus"],
            "community_folders": {
                "matched_by": dict(Counter(how for _, how in self.group_of.values())),
                "without_a_folder": sorted(c for c, (_, how) in self.group_of.items() if how == "none"),
            },
        }
        log.info(
            "PragmatiCQA (%s splits): %s; corpus %s: %d passages; spans whose keys are not in the corpus: %d",
            split_info["splits"],
            ", ".join(
                f"{s} {v['conversations']} conversations / {v['qas']} QAs / {v['topics']} topics"
                for s, v in sizes.items()
            ),
            self.corpus.kind,
            len(self.corpus.passages),
            counts["span_keys_not_in_corpus"],
        )
        if split_info["splits"] == "carved":
            log.warning("PragmatiCQA: %s", split_info["note"])

    # -- tokenizers -----------------------------------------------------------------------------------------
    def _ensure_tokenizers(self) -> None:
        if self.query_tokenizer is None:
            spec = self._encoder_spec("query")
            self.query_tokenizer = self._retrieval_tokenizer(spec.name, spec.max_length, self.corpus)
        if self.reader_tokenizer is None and self.tokenizer_name is not None:
            if self.tokenizer_name == TINY:
                if "train" not in self.examples:
                    raise ValueError(
                        "model.pretrained=tiny trains its tokenizer on the training split, and there is none: "
                        "evaluate a checkpoint (ckpt_path=...)"
                    )
                texts = [
                    t
                    for e in self.examples["train"]
                    for t in (e.question, e.answer, *e.literal_texts, *e.pragmatic_texts)
                ] + [t for p in self.corpus.passages for t in (p.title, p.text)]
                tokenizer = tt.train_wordpiece(texts, vocab_size=self.tiny_vocab_size)
            else:
                tokenizer = tt.load_pretrained_tokenizer(self.tokenizer_name)
            tokenizer.add_special_tokens(list(TAGS))
            self.reader_tokenizer = _plain(tokenizer)

    @property
    def query_vocab_size(self) -> int:
        return self.query_tokenizer.get_vocab_size()

    @property
    def reader_vocab_size(self) -> int | None:
        return None if self.reader_tokenizer is None else self.reader_tokenizer.get_vocab_size()

    @property
    def reader_special_ids(self) -> dict[str, int] | None:
        """pad, bos, eos and the decoder's first token: BART's `<pad> <s> </s>` (the decoder starts from
        `</s>`, as BART does) or BERT's `[PAD] [CLS] [SEP]` (starting from `[CLS]`)."""
        tok = self.reader_tokenizer
        if tok is None:
            return None
        bart = tok.token_to_id("</s>") is not None
        ids = {"pad": tt.pad_id(tok), "bos": tok.token_to_id("<s>" if bart else "[CLS]")}
        ids["eos"] = tok.token_to_id("</s>" if bart else "[SEP]")
        ids["decoder_start"] = ids["eos"] if bart else ids["bos"]
        return ids

    # -- what the task asks for -----------------------------------------------------------------------------
    def missing_split_hint(self, split: str) -> str:
        return f"data.path={self.path} has no {split}.jsonl"

    def collate_fn(self):
        return PragmatiCQACollate(self)

    def batch_examples(self, batch: dict) -> list[QAExample]:
        return [self.examples[batch["split"]][int(i)] for i in batch["index"]]

    def target_ids(self, example: QAExample) -> list[int]:
        text = format_answer(example.literal_texts, example.pragmatic_texts, example.answer)
        ids = self.reader_tokenizer.encode(text, add_special_tokens=False).ids[: self.max_target_length - 1]
        return [*ids, self.reader_special_ids["eos"]]

    def reader_inputs(
        self, queries: Sequence[str], passage_ids: Sequence[Sequence[int]]
    ) -> dict[str, torch.Tensor]:
        """Fusion-in-Decoder inputs, (B, K, L): "question: ... history: ... title: ... context: ..." for
        each question and each of its K passages, the question part cut to `max_query_tokens` (the oldest
        turns go first), the whole to `max_input_length`. Question and passage are encoded apart and their
        tokens joined, so the passage part is encoded as it reads after the question, with its leading space:
        a byte-level BPE (BART's) would otherwise cut "NYC.title" into ".", "t", "it", "le"."""
        from tokenizers import Encoding

        tok = self.reader_tokenizer
        specials = tok.post_processor.num_special_tokens_to_add(False) if tok.post_processor else 0
        encoded_queries = tok.encode_batch(list(queries), add_special_tokens=False)
        wanted = sorted({int(p) for row in passage_ids for p in row if p >= 0})
        passages = self.index.passages
        encoded = dict(
            zip(
                wanted,
                tok.encode_batch(
                    [f" title: {passages[p].title} context: {passages[p].text}" for p in wanted],
                    add_special_tokens=False,
                ),
                strict=True,
            )
        )
        rows = []
        for query, row in zip(encoded_queries, passage_ids, strict=True):
            query.truncate(self.max_query_tokens)
            room = self.max_input_length - len(query.ids) - specials
            for p in row:
                passage = encoded[int(p)] if p >= 0 else tok.encode("", add_special_tokens=False)
                passage = Encoding.merge([passage])  # a copy: the cached encoding is cut per question
                passage.truncate(max(room, 0))
                rows.append(tok.post_process(Encoding.merge([query, passage], growing_offsets=True)))
        width = max(len(e.ids) for e in rows)
        pad = tt.pad_id(tok)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, e in enumerate(rows):
            ids[i, : len(e.ids)] = torch.tensor(e.ids)
            mask[i, : len(e.ids)] = 1
        k = len(passage_ids[0]) if len(passage_ids) else 0
        return {
            "input_ids": ids.view(len(queries), k, width),
            "attention_mask": mask.view(len(queries), k, width),
        }

    def decode(self, ids: Sequence[int]) -> str:
        """Generated token ids -> text, keeping `</lit>` and `</prag>` (other special tokens dropped)."""
        tok = self.reader_tokenizer
        tag_of = {tok.token_to_id(t): t for t in TAGS}
        words, run = [], []
        for i in list(ids) + [None]:
            if i is None or i in tag_of:
                words.append(tok.decode(run, skip_special_tokens=True))
                if i is not None:
                    words.append(tag_of[i])
                run = []
            else:
                run.append(int(i))
        return " ".join(w for w in words if w)

    format_answer = staticmethod(format_answer)
    parse_answer = staticmethod(parse_answer)

    def describe(self, split: str, index: int) -> dict:
        """The question behind an example, for prediction tables."""
        e = self.examples[split][index]
        return {
            "split": split if self.split_mode == "released" else f"{split} (carved from train)",
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

    # -- checkpoint -----------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        state = {"corpus": self.corpus_kind}
        if self.index is not None:
            state["index_key"] = self.index.info["key"]
        if self.query_tokenizer is not None:
            state["query_tokenizer"] = self.query_tokenizer.to_str()
        if self.reader_tokenizer is not None:
            state["tokenizer"] = self.reader_tokenizer.to_str()
        return state

    def load_state_dict(self, state: dict) -> None:
        from tokenizers import Tokenizer

        if state.get("tokenizer"):
            self.reader_tokenizer = _plain(Tokenizer.from_str(state["tokenizer"]))
        if state.get("query_tokenizer"):
            spec = self._encoder_spec("query")
            self.query_tokenizer = tt.configure(Tokenizer.from_str(state["query_tokenizer"]), spec.max_length)
        self.saved_index_key = state.get("index_key")


def _in_more_than_one_split(values: dict[str, set[str]]) -> list[str]:
    """The values found in two or more splits, as `value (split, split)`, sorted."""
    splits_of: dict[str, list[str]] = {}
    for split, found in values.items():
        for value in found:
            splits_of.setdefault(value, []).append(split)
    return sorted(f"{v} ({', '.join(s)})" for v, s in splits_of.items() if len(s) > 1)


def _encode_pairs(tokenizer, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
    titles, texts = zip(*pairs, strict=True)
    return tt.encode_batch(tokenizer, titles, texts)


def _plain(tokenizer):
    """The reader's tokenizer without padding or truncation: inputs are cut and padded by hand."""
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


class PragmatiCQACollate:
    """Examples -> a batch: query encoder inputs, target ids, and the examples themselves."""

    def __init__(self, datamodule: PragmatiCQADataModule):
        self.datamodule = datamodule

    def __call__(self, items: list[dict]) -> dict:
        dm = self.datamodule
        split = items[0]["split"]
        examples = [dm.examples[split][it["index"]] for it in items]
        batch = {
            "index": torch.tensor([it["index"] for it in items], dtype=torch.long),
            "group": torch.tensor(
                [QUESTION_TYPES.index(e.question_type) for e in examples], dtype=torch.long
            ),
            "query": tt.encode_batch(dm.query_tokenizer, [e.query() for e in examples]),
            "split": split,  # the task reads the examples as `datamodule.batch_examples(batch)`
            "gold_passages": [dm.gold[split][it["index"]] for it in items],
        }
        if dm.reader_tokenizer is not None:
            targets = [dm.target_ids(e) for e in examples]
            labels = torch.full((len(targets), max(map(len, targets))), -100, dtype=torch.long)
            for i, ids in enumerate(targets):
                labels[i, : len(ids)] = torch.tensor(ids)
            batch["labels"] = labels
        return batch
