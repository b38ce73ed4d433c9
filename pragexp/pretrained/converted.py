"""A `.gguf` model converted once: its weights as safetensors and its tokenizer's own files, in a folder that
later loads read instead of the GGUF file.

transformers parses a GGUF file anew for the tokenizer, the config and the weights, and dequantizes every
tensor each time (about 37 s for SmolLM2 on a 2-core machine, against about 2 s for the converted folder). The
folder is `<cache>/<sha256 of the file>-transformers<version>-<dtype>/`, so another file, another transformers
or another dtype is another folder. `<cache>` is `$PRAGEXP_MODEL_CACHE`, else
`$XDG_CACHE_HOME/pragexp/models`, else `~/.cache/pragexp/models`; `PRAGEXP_MODEL_CACHE=off` reads the GGUF
file every time.

A folder is read only when its marker (`converted.json`, written last) names the same key and lists every file
at its size; a partial folder (a run killed while writing), a stale or a corrupt one (a file that fails to
load) is rebuilt. Each conversion writes a temporary folder and renames it into place, under a file lock: two
processes converting at once (DDP ranks, a SLURM array) end with one good folder, the second reading what the
first wrote.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import uuid
from pathlib import Path

from pragexp.pretrained import Pretrained, files_digest, weights_sha256

log = logging.getLogger(__name__)

CACHE_ENV = "PRAGEXP_MODEL_CACHE"
DISABLED = ("off", "none", "false", "0")
MARKER = "converted.json"
ALIGNMENT = 64  # bytes: torch's CPU allocator's alignment


def cache_root() -> Path | None:
    """Where converted models live; None when `PRAGEXP_MODEL_CACHE=off`."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() in DISABLED:
        return None
    if value:
        return Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pragexp" / "models"


def gguf_tokenizer(pretrained: Pretrained):
    """The tokenizer of a GGUF model: from a converted folder when there is one (any dtype: the tokenizer is
    the same), else parsed from the file, without dequantizing the weights."""
    from transformers import AutoTokenizer

    root = cache_root()
    if root is not None and pretrained.local is not None:
        prefix = _key(pretrained, "")
        for folder in sorted(root.glob(f"{prefix}*")):
            if _marker(folder, folder.name) is not None:
                return AutoTokenizer.from_pretrained(folder)
    return _parse_tokenizer(pretrained)


def gguf_model(pretrained: Pretrained, dtype: str = "auto", tokenizer=None):
    """The weights of a GGUF model, from its converted folder (converted first where there is none;
    `tokenizer`: the file's, when the caller has it already, so that a conversion parses the file once for
    it)."""
    root = cache_root()
    if root is None:
        return _from_gguf(pretrained, dtype)
    if pretrained.local is None:
        raise FileNotFoundError(f"{Path(pretrained.source) / pretrained.gguf_file}: no such GGUF file")
    folder = root / _key(pretrained, dtype)
    failed = None
    marker = _marker(folder, folder.name)
    if marker is not None:
        try:
            return _from_folder(folder, marker)
        except Exception as err:  # a corrupt file: safetensors and transformers raise many kinds
            log.warning(
                "converted model %s does not load (%s): converting %s again", folder, err, pretrained.name
            )
            failed = marker["build"]
    with _locked(root / f".{folder.name}.lock"):
        marker = _marker(folder, folder.name)
        if marker is not None and marker["build"] != failed:  # another process converted it meanwhile
            return _from_folder(folder, marker)
        _discard(folder)
        return _convert(pretrained, dtype, folder, tokenizer)


def _key(pretrained: Pretrained, dtype: str) -> str:
    import transformers

    return f"{_content_sha256(pretrained.local)[:32]}-transformers{transformers.__version__}-{dtype}"


def _content_sha256(path: Path) -> str:
    """The file's SHA-256, remembered under the cache by its name, size and mtime (a large file is read
    once)."""
    root = cache_root()
    memo = root / "sha256" / f"{files_digest(path)}.txt" if root is not None else None
    if memo is not None and memo.is_file():
        return memo.read_text(encoding="utf-8").strip()
    sha = weights_sha256(path)
    if memo is not None:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{uuid.uuid4().hex}")
        tmp.write_text(sha, encoding="utf-8")
        os.replace(tmp, memo)
    return sha


def _marker(folder: Path, key: str) -> dict | None:
    """The marker of a complete folder for `key`; None when the folder is missing, partial or stale."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        complete = marker["key"] == key and all(
            (folder / name).stat().st_size == size for name, size in marker["files"].items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return marker if complete else None


def _torch_dtype(dtype: str):
    import torch

    return {} if dtype == "auto" else {"dtype": getattr(torch, dtype)}


def _parse_tokenizer(pretrained: Pretrained):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(pretrained.source, **pretrained.kwargs())
    except OSError as err:
        raise pretrained.error(err, "the tokenizer of") from err


def _from_gguf(pretrained: Pretrained, dtype: str):
    from transformers import AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(
            pretrained.source, **pretrained.kwargs(), **_torch_dtype(dtype)
        )
    except OSError as err:
        raise pretrained.error(err, "the language model") from err


def _from_folder(folder: Path, marker: dict):
    from transformers import AutoModelForCausalLM

    # the dtype the weights were converted in (an `auto` load of the GGUF file picks it), read back as it is
    return _aligned(AutoModelForCausalLM.from_pretrained(folder, **_torch_dtype(marker["dtype"])))


def _aligned(model):
    """The model with every weight at an address torch's own allocator would give it (a multiple of 64 bytes).
    safetensors maps the file into memory, each tensor at its offset in the file (a multiple of 8 bytes only),
    and a CPU matrix product rounds differently for a misaligned operand: SmolLM2 scored from the mapped file
    differed from the GGUF load in the 7th digit, and bit for bit once copied."""
    for parameter in model.parameters():
        if parameter.device.type == "cpu" and parameter.data_ptr() % ALIGNMENT:
            parameter.data = parameter.data.clone()
    return model


def _convert(pretrained: Pretrained, dtype: str, folder: Path, tokenizer=None):
    """Reads the GGUF file, writes the folder (temporary folder, marker last, rename) and returns the
    model."""
    model = _from_gguf(pretrained, dtype)
    if _kept_blocks(model):
        log.info(
            "%s keeps its GGUF blocks (a GGUF kernel): read from the file, not converted", pretrained.name
        )
        return model
    tokenizer = tokenizer if tokenizer is not None else _parse_tokenizer(pretrained)
    tmp = folder.with_name(f".{folder.name}.tmp-{uuid.uuid4().hex}")
    try:
        with _dequantized(model):
            model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        files = {f.name: f.stat().st_size for f in sorted(tmp.iterdir()) if f.is_file()}
        marker = {
            "key": folder.name,
            "source": str(pretrained.local),
            "dtype": str(model.dtype).removeprefix("torch."),
            "build": uuid.uuid4().hex,
            "files": files,
        }
        (tmp / MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
        os.rename(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("converted %s into %s", pretrained.local, folder)
    return model


def _kept_blocks(model) -> bool:
    """Whether transformers kept GGUF blocks (with a GGUF matmul kernel) instead of dequantizing every
    tensor."""
    return any(
        type(m).__module__.startswith("transformers.integrations.gguf") for m in model.modules()
    ) or any(not p.is_floating_point() for p in model.parameters())


@contextlib.contextmanager
def _dequantized(model):
    """The model as the plain one it is once dequantized: transformers refuses to save a model that a GGUF
    quantizer loaded, and would write the quantizer into its config."""
    quantizer, config = getattr(model, "hf_quantizer", None), model.config
    setting = config.__dict__.pop("quantization_config", None)
    model.hf_quantizer = None
    try:
        yield model
    finally:
        model.hf_quantizer = quantizer
        if setting is not None:
            config.quantization_config = setting


def _discard(folder: Path) -> None:
    """Moves a partial, stale or corrupt folder aside, then deletes it (a reader never sees it half-deleted),
    with what killed conversions left (called under the key's lock: no other process is writing them)."""
    if folder.exists():
        trash = folder.with_name(f".{folder.name}.trash-{uuid.uuid4().hex}")
        os.rename(folder, trash)
        shutil.rmtree(trash, ignore_errors=True)
    for leftover in folder.parent.glob(f".{folder.name}.tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on `path` (created), held by this process until the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
