"""The Fusion-in-Decoder reader's text: what goes in and what comes out, around its tokenizer.

`ReaderText(tokenizer, tags, ...)` holds the reader's tokenizer (a `tokenizers.Tokenizer`, without padding or
truncation: inputs are cut and padded here) and gives:

- `special_ids`: pad, bos, eos and the decoder's first token, which `FiDReader` is built with;
- `inputs(queries, passages)`: the (B, K, L) token ids and mask of each question read with each of its K
  passages;
- `target_ids(text)`: a target text as token ids ending with eos, cut to `max_target_length`;
- `decode(ids)`: generated ids back to text, keeping `tags` (the answer format's span closers, added to the
  tokenizer as special tokens) where they stand.

The answer format itself (which tags, what a target reads like) belongs to the data set; it is handed in as
`tags`, so nothing here imports pragexp.data.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tokenizers import Encoding, Tokenizer

Passage = tuple[str, str]  # (title, text)


class ReaderText:
    def __init__(
        self,
        tokenizer: Tokenizer,
        tags: Sequence[str] = (),
        max_query_tokens: int = 256,
        max_input_length: int = 512,
        max_target_length: int = 128,
    ):
        tokenizer.add_special_tokens(list(tags))  # a no-op for a tokenizer that has them (from a checkpoint)
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer, self.tags = tokenizer, tuple(tags)
        self.max_query_tokens, self.max_input_length = int(max_query_tokens), int(max_input_length)
        self.max_target_length = int(max_target_length)
        self.special_ids = _special_ids(tokenizer)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def inputs(
        self, queries: Sequence[str], passages: Sequence[Sequence[Passage | None]]
    ) -> dict[str, torch.Tensor]:
        """Fusion-in-Decoder inputs, (B, K, L): "question: ... history: ... title: ... context: ..." for each
        question and each of its K passages (None where fewer were found: the question alone), the question
        part cut to `max_query_tokens` (the oldest turns go first), the whole to `max_input_length`. Question
        and passage are encoded apart and their tokens joined, so the passage part is encoded as it reads
        after the question, with its leading space: a byte-level BPE (BART's) would otherwise cut
        "NYC.title" into ".", "t", "it", "le"."""
        tok = self.tokenizer
        specials = tok.post_processor.num_special_tokens_to_add(False) if tok.post_processor else 0
        encoded_queries = tok.encode_batch(list(queries), add_special_tokens=False)
        wanted = list(dict.fromkeys(p for row in passages for p in row if p is not None))
        texts = [f" title: {title} context: {text}" for title, text in wanted]
        encoded = dict(zip(wanted, tok.encode_batch(texts, add_special_tokens=False), strict=True))
        empty = tok.encode("", add_special_tokens=False)
        rows = []
        for query, row in zip(encoded_queries, passages, strict=True):
            query.truncate(self.max_query_tokens)
            room = self.max_input_length - len(query.ids) - specials
            for p in row:
                passage = Encoding.merge([encoded[p] if p is not None else empty])  # a copy, cut per question
                passage.truncate(max(room, 0))
                rows.append(tok.post_process(Encoding.merge([query, passage], growing_offsets=True)))
        width = max(len(e.ids) for e in rows)
        ids = torch.full((len(rows), width), self.special_ids["pad"], dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, e in enumerate(rows):
            ids[i, : len(e.ids)] = torch.tensor(e.ids)
            mask[i, : len(e.ids)] = 1
        k = len(passages[0]) if len(passages) else 0
        return {
            "input_ids": ids.view(len(queries), k, width),
            "attention_mask": mask.view(len(queries), k, width),
        }

    def target_ids(self, text: str) -> list[int]:
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids[: self.max_target_length - 1]
        return [*ids, self.special_ids["eos"]]

    def decode(self, ids: Sequence[int]) -> str:
        """Generated token ids -> text, keeping the tags (other special tokens dropped)."""
        tok = self.tokenizer
        tag_of = {tok.token_to_id(t): t for t in self.tags}
        words, run = [], []
        for i in [*ids, None]:
            if i is None or i in tag_of:
                words.append(tok.decode(run, skip_special_tokens=True))
                if i is not None:
                    words.append(tag_of[i])
                run = []
            else:
                run.append(int(i))
        return " ".join(w for w in words if w)


def _special_ids(tok: Tokenizer) -> dict[str, int]:
    """BART's `<pad> <s> </s>` (the decoder starts from `</s>`, as BART does) or BERT's `[PAD] [CLS] [SEP]`
    (starting from `[CLS]`)."""
    bart = tok.token_to_id("</s>") is not None
    pad, bos, eos = ("<pad>", "<s>", "</s>") if bart else ("[PAD]", "[CLS]", "[SEP]")
    ids = {"pad": tok.token_to_id(pad), "bos": tok.token_to_id(bos), "eos": tok.token_to_id(eos)}
    ids["pad"] = 0 if ids["pad"] is None else ids["pad"]
    ids["decoder_start"] = ids["eos"] if bart else ids["bos"]
    return ids
