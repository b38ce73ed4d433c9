"""Build, inspect and query PragmatiCQA's passage index from the command line, with the same config (and so
the same cache) as training runs:

    python -m pragexp.data.pragmaticqa build  [overrides]          # corpus, embeddings and index, cached
    python -m pragexp.data.pragmaticqa info   [overrides]          # what the index holds, where it lives
    python -m pragexp.data.pragmaticqa search "a question" [--k 5] [--community NAME] [--ckpt run.ckpt] \
        [overrides]

Overrides are those of `python -m pragexp.train task=pragmaticqa ...` (data.path=..., data.corpus=spans,
retriever=minilm, retriever.index.type=hnsw, paths.cache_dir=...). `build` and `info` print one JSON object;
`search` prints one JSON line per passage. `--ckpt` searches with the (fine-tuned) question encoder and
tokenizer of a PragmatiCQA checkpoint instead of the configured encoder's initial weights.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from pragexp.data.pragmaticqa.datamodule import PragmatiCQADataModule
from pragexp.data.releases.resolver import register as register_release_resolver
from pragexp.entry import composition
from pragexp.pretrained.hub import check_hub_models
from pragexp.retrieval.encoders import build_encoder
from pragexp.runs import checkpoint

TASK = "pragmaticqa"


def compose(overrides: list[str]):
    register_release_resolver()  # data.path's default: the fetched release
    # No reader: retrieval needs no generator tokenizer (a hub name would need the network).
    return composition.compose(
        "train", [f"task={TASK}", "data.report_dir=null", "data.tokenizer=null", *overrides]
    )


def data_module(cfg, saved: checkpoint.PragexpCheckpoint | None = None) -> PragmatiCQADataModule:
    """The data module as a training run builds it (with a checkpoint's tokenizers), its index built or
    found in the cache."""
    check_hub_models(cfg, ("retriever.query_encoder", "retriever.passage_encoder"))  # no reader here
    dm = composition.build_datamodule(cfg, saved)
    dm.prepare_data()
    dm.setup("test")
    return dm


def describe(dm: PragmatiCQADataModule) -> dict:
    info = dm.index.info
    return {
        "corpus": dm.corpus.kind,
        "passages": len(dm.index.passages),
        "dim": int(dm.index.embeddings.shape[1]),
        "encoder": dm.retriever.passage_encoder,
        "index": dm.retriever.index.build_settings(),
        "embeddings_dir": info["embeddings"],
        "index_dir": info["index"],
    }


def search(
    dm: PragmatiCQADataModule,
    query: str,
    k: int,
    community: str | None,
    saved: checkpoint.PragexpCheckpoint | None,
) -> list[dict]:
    spec = dm.retriever.encoder("query")
    encoder = build_encoder(spec.name, spec.pooling, spec.normalize, vocab_size=dm.query_vocab_size)
    if saved is not None:
        encoder.load_state_dict(saved.weights("net.query_encoder."))
    with torch.inference_mode():
        vector = encoder.eval()(**dm.query_tokenizer.encode([query]))
    scores, ids = dm.index.search(vector.float().numpy(), k, [community] if community else None)
    out = []
    for rank, (score, pid) in enumerate(zip(scores[0], ids[0], strict=True), start=1):
        if pid < 0:
            continue
        passage = dm.index.passages[pid]
        out.append(
            {
                "rank": rank,
                "score": round(float(score), 4),
                "passage": int(pid),
                "title": passage.title,
                "community": passage.group,
                "text": passage.text,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pragexp.data.pragmaticqa", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="build (or find in the cache) the corpus, its embeddings and its index")
    commands.add_parser("info", help="what the index holds and where it lives")
    find = commands.add_parser("search", help="the passages nearest a question")
    find.add_argument("query", help="the question (with any history after it)")
    find.add_argument("--k", type=int, default=5)
    find.add_argument(
        "--community", default=None, help="search within one passage group (a community's folder)"
    )
    find.add_argument("--ckpt", default=None, help="a PragmatiCQA checkpoint: its question encoder")
    args, overrides = parser.parse_known_args(argv)
    cfg = compose(overrides)
    saved = None
    if getattr(args, "ckpt", None):
        saved = checkpoint.read(args.ckpt, setting="--ckpt")
        saved.check_task(TASK)
    dm = data_module(cfg, saved)
    if args.command in ("build", "info"):
        print(json.dumps(describe(dm)))
        return 0
    for hit in search(dm, args.query, args.k, args.community, saved):
        print(json.dumps(hit, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
