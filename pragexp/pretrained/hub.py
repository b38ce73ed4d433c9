"""Models named by a hub id, checked before any work starts.

Offline (`HF_HUB_OFFLINE=1`, as in tests and CI), a hub model that is not in the local Hugging Face cache
would fail only when it is first loaded: after the corpus is encoded, say, or at the first evaluation.
`check_hub_models(cfg)` looks at every setting that names a model (`HUB_SETTINGS`) as soon as the config
is composed and stops with one error that lists each missing model and the setting that replaces it.
Online it does nothing: the loaders download what they need (and their errors carry the same hints).

A setting is not a hub id when it is one of pragexp's offline names (`minilm`, `tiny`, `smollm2`), a path
that exists, empty or `none`, or when its backend is a remote server (a node with `base_url`: the server
holds the model).
"""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from pragexp.pretrained import OFFLINE_HINTS, hub_offline, in_local_cache, is_hub_id

# Where a config names a model, and what replaces a hub model there offline (the resolver's hints).
HUB_SETTINGS = OFFLINE_HINTS


class HubModelUnavailable(OSError):
    pass


def missing_hub_models(
    cfg: DictConfig, settings=tuple(HUB_SETTINGS), model: DictConfig | None = None
) -> list[tuple[str, str, str]]:
    """(setting, model, replacement) for every hub model the config names in `settings` that is not
    cached locally; `model` replaces the config's `model` node (a checkpoint's model decides)."""
    missing = []
    for key in settings:
        replacement = HUB_SETTINGS[key]
        node, path = (
            (model, key.split(".", 1)[1]) if model is not None and key.startswith("model.") else (cfg, key)
        )
        name = OmegaConf.select(node, path, default=None)
        parent = OmegaConf.select(node, path.rsplit(".", 1)[0], default=None) if "." in path else node
        if not is_hub_id(name) or (isinstance(parent, DictConfig) and parent.get("base_url")):
            continue
        revision = parent.get("revision") if isinstance(parent, DictConfig) else None
        filename = parent.get("gguf_file") if isinstance(parent, DictConfig) else None
        if not in_local_cache(name, revision, filename):
            missing.append((key, name, replacement))
    return missing


def check_hub_models(cfg: DictConfig, settings=tuple(HUB_SETTINGS), model: DictConfig | None = None) -> None:
    """Offline, refuse at once a config naming hub models that are not cached (see the module docstring);
    `settings`: the keys that matter to the caller (all by default); `model` as in `missing_hub_models`."""
    if not hub_offline():
        return
    missing = missing_hub_models(cfg, settings, model)
    if missing:
        lines = "\n".join(f"  {key}={name}: use {replacement}" for key, name, replacement in missing)
        raise HubModelUnavailable(
            "offline (HF_HUB_OFFLINE=1) and not in the local Hugging Face cache:\n"
            f"{lines}\n(pragexp's offline models need no download: minilm, smollm2, tiny)"
        )
