"""The commands the READMEs and the documentation's pages (docs/**/*.md) show: each composes as written, and
each either runs offline or says it needs the hub (offline, pragexp refuses it before any work, naming the
setting that replaces each hub model). The PragmatiCQA page's offline oracle command runs end to end."""

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import PRAGMATICQA_FIXTURE, ROOT, compose_config, run_module
from hydra.core.override_parser.overrides_parser import OverridesParser

from pragexp.pretrained.hub import HUB_SETTINGS, HubModelUnavailable, check_hub_models, missing_hub_models

READMES = [ROOT / "README.md", *sorted((ROOT / "experiments").glob("*/README.md"))]
# Placeholders: <...>, ..., $(...), a shell's $VAR or ${VAR} (not Hydra's ${oc.env:VAR}, which composes as it
# is).
_PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\$\([^)]*\)|\$\{\w+\}|\$\w+")

DOCS_PAGES = sorted((ROOT / "docs").rglob("*.md"))  # the commands moved out of README.md stay tested


def readme_commands() -> list[tuple[str, str, str, str]]:
    """(label, entry point, arguments, the block's comments above it and its own) for every `python -m
    pragexp.train|eval` line in a code block of a README or a docs page, continuation lines joined."""
    found = []
    for readme in [*READMES, *DOCS_PAGES]:
        for block in re.findall(r"```[a-z]*\n(.*?)```", readme.read_text(encoding="utf-8"), re.S):
            comment = ""
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip()
                if line.startswith("#"):
                    comment += " " + line  # a block's comments so far speak for the commands below them
                    continue
                match = re.search(r"python -m (pragexp\.(?:train|eval))\b([^#]*)(#.*)?$", line)
                if match:
                    label = f"{readme.relative_to(ROOT).as_posix()}: {match.group(0)[:90]}"
                    found.append((label, match.group(1), match.group(2), f"{comment} {match.group(3) or ''}"))
    return found


def as_overrides(arguments: str) -> list[str]:
    """The command's overrides with placeholders filled in, optional parts dropped, and a sweep's first
    value."""
    words = shlex.split(_PLACEHOLDER.sub("x", arguments))
    words = [w for w in words if w != "-m" and not (w.startswith("[") and w.endswith("]"))]
    parsed = OverridesParser.create().parse_overrides(words)
    overrides = []
    for override in parsed:
        if override.is_sweep_override():
            first = next(iter(override.sweep_string_iterator()))
            overrides.append(f"{override.get_key_element()}={first}")
        else:
            overrides.append(override.input_line)
    return overrides


COMMANDS = readme_commands()


def test_the_readmes_and_docs_show_commands():
    assert len(COMMANDS) > 30 and any("pragmaticqa" in c[2] for c in COMMANDS)
    for source in ("README.md", "docs/llm/index.md", "docs/benchmarks/ludwig.md", "docs/clusters.md"):
        assert any(c[0].startswith(f"{source}: ") for c in COMMANDS), f"no command read from {source}"


@pytest.mark.parametrize(("label", "entry", "arguments", "comments"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_readme_command_composes_and_runs_offline_or_says_it_needs_the_hub(
    label, entry, arguments, comments, tmp_path, monkeypatch
):
    cfg = compose_config(as_overrides(arguments), tmp_path, entry.split(".")[1])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = missing_hub_models(cfg)
    if missing:
        assert "hub" in comments.lower(), f"{label} needs hub models {missing} and its README does not say so"
        with pytest.raises(HubModelUnavailable) as refused:
            check_hub_models(cfg)
        for key, _, _ in missing:
            assert f"{key}=" in str(refused.value) and HUB_SETTINGS[key] in str(refused.value)


def test_the_papers_pragmaticqa_setting_is_refused_offline_with_the_settings_that_replace_it(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = compose_config(["task=pragmaticqa", "model=fid"], tmp_path, "eval")
    with pytest.raises(HubModelUnavailable) as refused:
        check_hub_models(cfg)
    message = str(refused.value)
    assert (
        "retriever.query_encoder=facebook/dpr-question_encoder-single-nq-base: use retriever=minilm"
        in message
    )
    assert "model.pretrained=facebook/bart-large: use model.pretrained=minilm" in message
    assert "metrics.q_scorer=facebook/bart-large-cnn: use metrics.q_scorer=minilm" in message
    offline = compose_config(
        [
            "task=pragmaticqa",
            "model=fid",
            "retriever=minilm",
            "model.pretrained=minilm",
            "metrics.q_scorer=none",
        ],
        tmp_path,
        "eval",
    )
    check_hub_models(offline)  # nothing missing
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    check_hub_models(cfg)  # online, the loaders download what they need


@pytest.mark.slow
def test_the_docs_offline_oracle_command_runs_as_written(tmp_path):
    """The PragmatiCQA page's offline command, with the release folder replaced by the invented fixture."""
    label, entry, arguments, _ = next(
        c
        for c in COMMANDS
        if c[0].startswith("docs/tasks/pragmaticqa.md")
        and "model=oracle" in c[2]
        and "retriever=minilm" in c[2]
    )
    # the command reads the fetched release (data.path's default); here the invented fixture stands in for it
    args = [
        *(w for w in shlex.split(arguments) if not w.startswith("data.path=")),
        f"data.path={PRAGMATICQA_FIXTURE}",
    ]
    # A real subprocess, as a user starts it (the other tests' runs are forked: tests/forked_runs.py).
    done = run_module(
        entry, [*args, "logger=none", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path, fork=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads(Path(tmp_path / "run" / "metrics.json").read_text())
    assert metrics["test/f1_lit"] == 1.0 and metrics["test/f1_prag"] == metrics["test/f1_prag_ceiling"]
    assert "test/q" in metrics and "test/r@5" in metrics
