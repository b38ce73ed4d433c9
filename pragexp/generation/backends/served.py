"""What an OpenAI-compatible server serves, named as the response cache keys it: the model, not its address.

The same model behind another node, port or restart must answer from the cache, and another model under the
same name must not. `llm=openai` (`OpenAIBackend.served`) names what a server serves by
- what it says of the model (`/v1/models`): vLLM's `root` (the path or hub name its weights were read from)
  and `parent` (the base of a LoRA adapter it serves under a name of its own), llama.cpp's `meta` (the file's
  parameter count and size); fields that change from one request or restart to the next (`created`, the
  permissions' ids) and serving limits that change no answer (`max_model_len`: a longer prompt is refused) are
  left out;
- a fingerprint of the weights: the log-probabilities it gives each token of a fixed text (`PROBE`, echoed),
  asked once per backend.

A server is not bit-reproducible across batch shapes (in bfloat16 a logit near 20 moves in steps of 0.125), so
a probe's values cannot be hashed as they are, and no rounding of them is stable (a value near a rounding
boundary flips from run to run). A probe is instead compared with the probes already seen under the same name
(`Fingerprints`: one small JSON file per fingerprint in a folder of the cache, written whole by a rename, read
by every host, no lock): it takes the name of the first (in file-name order) that has the same tokens and lies
within `MEAN_TOLERANCE` on average and `MAX_TOLERANCE` at every token; a probe like none of them is written as
a new one. The tolerances sit above rounding noise: measured on SmolLM2-135M (transformers, CPU), another
batch shape in bfloat16 moved the probe's log-probabilities by 0.006 nats on average and 0.06 at most,
bfloat16 against float32 by 0.035 and 0.14 (the same weights in another precision count as one model); they
are meant to sit below what separates two checkpoints or a base from its fine-tune (tenths of a nat on
average): a judgement, not measured here, and no guarantee for models closer than that. Two jobs that meet a
new model at once may each write a fingerprint; each then looks again and takes the first, so only jobs that
look in between can name it apart: answers are then found less often, never wrongly.

A server that gives no log-probabilities for an echoed prompt (a chat-only API) cannot be fingerprinted: it is
named by its address, as any server was before.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)

# Never change it: every fingerprint is of this text.
PROBE = (
    "The committee met on a rainy Tuesday to discuss the budget. After a long debate about the library's "
    "leaking "
    "roof, they agreed to postpone the vote until spring, when the new figures would be ready."
)
SERVED_FIELDS = ("root", "parent", "meta")  # what /v1/models says of a model that names its weights
MEAN_TOLERANCE = 0.05  # nats per token, on average over the probe
MAX_TOLERANCE = 0.5  # nats, at any one token


def probe_request(model: str) -> dict:
    """The `/completions` request whose echo is the probe: the probe's tokens and their log-probabilities."""
    return {"model": model, "prompt": PROBE, "max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": 1}


def probe_values(answer: dict) -> tuple[list[str], list[float]] | None:
    """The probe's tokens and the log-probability the server gave each (the first, without context, left out)
    from its answer to `probe_request`; None where it gave none."""
    logprobs = ((answer.get("choices") or [{}])[0]).get("logprobs") or {}
    tokens, offsets, values = (logprobs.get(k) or [] for k in ("tokens", "text_offset", "token_logprobs"))
    if not len(tokens) == len(offsets) == len(values):
        return None
    kept = [
        (t, float(v))
        for t, o, v in zip(tokens, offsets, values, strict=True)
        if v is not None
        and o is not None
        and o < len(PROBE)  # the prompt's own tokens, not the generated one
    ]
    return ([t for t, _ in kept], [v for _, v in kept]) if kept else None


def served_fields(listed: list, model: str) -> dict:
    """The entry of `/v1/models` (its `data`) for `model`, cut to `SERVED_FIELDS` ({} where there is none)."""
    entry = next((m for m in listed if isinstance(m, dict) and m.get("id") == model), {})
    return {k: entry[k] for k in SERVED_FIELDS if entry.get(k) is not None}


class Fingerprints:
    """The probes seen so far, per model name: `<folder>/<name's digest>/<fingerprint>.json`. Without a
    folder, a fingerprint is the digest of the probe's exact values (nothing kept between processes)."""

    def __init__(self, folder: str | Path | None):
        self.folder = Path(folder) if folder else None

    def match(self, name: dict, tokens: list[str], values: list[float]) -> str:
        """The fingerprint of the first probe seen under `name` that is the same model; else this probe's,
        written for the next jobs, then looked for again (a job that wrote the same model's at the same
        moment: the first file of the two names both)."""
        exact = _digest({"tokens": tokens, "values": values})
        if self.folder is None:
            return exact
        folder = self.folder / _digest(name)
        found = self._first(folder, tokens, values)
        if found is None:
            record = {"name": name, "tokens": tokens, "values": values}
            atomic_write_text(folder / f"{exact}.json", json.dumps(record) + "\n")
            found = self._first(folder, tokens, values)
        return found or exact

    @staticmethod
    def _first(folder: Path, tokens: list[str], values: list[float]) -> str | None:
        for path in sorted(folder.glob("*.json")):
            seen = _read(path)
            if seen is not None and same_model(seen["tokens"], seen["values"], tokens, values):
                return path.stem
        return None


def same_model(
    tokens_a: list[str], values_a: list[float], tokens_b: list[str], values_b: list[float]
) -> bool:
    """Whether two probes are of one model: the same tokens, log-probabilities within the tolerances."""
    if tokens_a != tokens_b or len(values_a) != len(values_b) or not values_a:
        return False
    gaps = [abs(a - b) for a, b in zip(values_a, values_b, strict=True)]
    return sum(gaps) / len(gaps) <= MEAN_TOLERANCE and max(gaps) <= MAX_TOLERANCE


def _read(path: Path) -> dict | None:
    """A fingerprint file, or None (said in the log) where it is damaged: it is then never matched."""
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(seen.get("tokens"), list) and isinstance(seen.get("values"), list):
            return seen
        problem = "no tokens or values"
    except (OSError, ValueError, AttributeError) as err:
        problem = str(err)
    log.warning("skipping the damaged fingerprint file %s (%s)", path, problem)
    return None


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]
