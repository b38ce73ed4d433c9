"""Build, inspect and query a passage index from the command line, with the same config (and so the same
cache) as training runs:

    python -m pragexp.retrieval build  [overrides]          # corpus, embeddings and index, cached
    python -m pragexp.retrieval info   [overrides]          # what the index holds, where it lives
    python -m pragexp.retrieval search "a question" [--k 5] [--community NAME] [--ckpt run.ckpt] [overrides]

Overrides are those of `python -m pragexp.train task=pragmaticqa ...` (data.path=..., data.corpus=spans,
retriever=minilm, retriever.index.type=hnsw, paths.cache_dir=...). `build` and `info` print one JSON object;
`search` prints one JSON line per passage. `--ckpt` searches with the (fine-tuned) question encoder and
tokenizer of a PragmatiCQA checkpoint instead of the configured encoder's initial weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from pragexp.retrieval.encoders import build_encoder
from pragexp.utils import checkpoint

# The configs of pragexp.train (conf/ beside the package); the data module comes from there, through Hydra,
# so this package itself never imports Lightning.
CONFIG_DIR = Path(__file__).resolve().parents[2] / "conf"


def compose(overrides: list[str]):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.hydra_config import HydraConfig

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose(
            "train",
            # No reader: retrieval needs no generator tokenizer (a hub name would need the network).
            overrides=["task=pragmaticqa", "data.report_dir=null", "data.tokenizer=null", *overrides],
            return_hydra_config=True,
        )
    HydraConfig.instance().set_config(cfg)
    return cfg


def data_module(cfg, ckpt: str | None = None):
    from hydra.utils import instantiate

    from pragexp.utils.hub import check_hub_models

    check_hub_models(cfg, ("retriever.query_encoder", "retriever.passage_encoder"))  # no reader here
    dm = instantiate(cfg.data)
    if ckpt:
        dm.load_state_dict(checkpoint.read(ckpt, setting="--ckpt").datamodule_state(type(dm).__qualname__))
    dm.prepare_data()
    dm.setup("test")
    return dm


def describe(dm) -> dict:
    info = dm.index.info
    return {
        "corpus": dm.corpus.kind,
        "passages": len(dm.index.passages),
        "dim": int(dm.index.embeddings.shape[1]),
        "encoder": dm.retriever.get("passage_encoder"),
        "index": dm.index_spec.build_settings(),
        "embeddings_dir": info["embeddings"],
        "index_dir": info["index"],
    }


def search(cfg, dm, query: str, k: int, community: str | None, ckpt: str | None) -> list[dict]:
    retriever = cfg.retriever
    encoder = build_encoder(
        retriever.query_encoder, retriever.pooling, retriever.normalize, vocab_size=dm.query_vocab_size
    )
    if ckpt:
        encoder.load_state_dict(checkpoint.read(ckpt, setting="--ckpt").weights("net.query_encoder."))
    from pragexp.data.common.tokenization import encode_batch

    with torch.inference_mode():
        vector = encoder.eval()(**encode_batch(dm.query_tokenizer, [query]))
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
    parser = argparse.ArgumentParser(prog="python -m pragexp.retrieval", description=__doc__.split("\n\n")[0])
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
    dm = data_module(cfg, getattr(args, "ckpt", None))
    if args.command in ("build", "info"):
        print(json.dumps(describe(dm)))
        return 0
    for hit in search(cfg, dm, args.query, args.k, args.community, args.ckpt):
        print(json.dumps(hit, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
