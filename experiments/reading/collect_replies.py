"""The distinct replies of `prompt.scoring=generate` runs (their predictions.jsonl), as unlabelled rows of the
reply set (tests/fixtures/replies/): each row is then labelled by reading it (`reading`: the option it gives,
or null).

    python experiments/reading/collect_replies.py OUT.jsonl RUN_DIR [RUN_DIR ...]

A run's options are its records' `options` where they hold them (LUDWIG, Hu et al.), else the prompt group's
verbalisations (Circa's relaxed labels); the reply is the raw one, reasoning included (the test cuts it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

CIRCA_RELAXED = ["yes", "no", "yes, subject to some conditions", "neither yes nor no"]


def options_of(record: dict, task: str) -> list[str]:
    if isinstance(record.get("options"), list):
        return [str(o) for o in record["options"]]
    if task == "circa":
        return CIRCA_RELAXED
    raise ValueError(f"{task}: records hold no options")


def rows_of(run: Path, seen: set) -> list[dict]:
    config = json.loads((run / "run.json").read_text())
    task = config["task"]["name"]
    rows = []
    for line in (run / "predictions.jsonl").read_text().splitlines():
        record = json.loads(line)
        options = options_of(record, task)
        key = (task, record["reply"], tuple(options), tuple(record["continuations"]))
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            {
                "task": task,
                "source": "smollm2",
                "template": record["template"],
                "options": options,
                "continuations": record["continuations"],
                "reply": record["reply"],
                "run_choice": record["choice"],
            }
        )
    return rows


def main(out: str, *runs: str) -> None:
    seen: set = set()
    rows = [row for run in runs for row in rows_of(Path(run), seen)]
    Path(out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} distinct replies from {len(runs)} runs")


if __name__ == "__main__":
    main(*sys.argv[1:])
