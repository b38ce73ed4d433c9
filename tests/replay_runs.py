"""LUDWIG runs through the test's OpenAI-compatible server (tests/openai_server.py), each with a cache folder
of the test's own: what the replay and pack tests run, stop the server, and run again."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import LUDWIG_FIXTURE, compose_config

from pragexp.run import run


def ludwig_run(cache: Path) -> list[str]:
    """A quiet LUDWIG evaluation on the fixture, its response cache in `cache`: the LLM is the caller's."""
    return [
        f"paths.cache_dir={cache}",
        "logger=none",
        "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
        "print_config=false",
        "task=ludwig",
        f"data.path={LUDWIG_FIXTURE}",
    ]


def ludwig_overrides(url: str, cache: Path, *extra: str) -> list[str]:
    return [
        *ludwig_run(cache),
        "llm=openai",
        "llm.model=m",
        f"llm.base_url={url}",
        "llm.chat=false",
        "llm.api_key_env=null",
        "llm.max_retries=0",  # a server that is gone is said at once
        *extra,
    ]


def run_at(out: Path, overrides: list[str]) -> dict:
    """The run's metrics.json as written (the run's return value aside)."""
    run(compose_config(overrides, out, "eval"))
    return json.loads((out / "metrics.json").read_text())
