"""Nothing else moves: the same runs before and after a change of the house, compared file by file.

    python experiments/house/identity.py run OUT      # the runs into OUT/runs, the report, OUT/manifest.json
    python experiments/house/identity.py compare A B  # two manifests: what is identical, what is not

Every run is a user's command (`python -m pragexp.train|eval`) on the test fixtures with tiny models, and on
the shared samples (`../shared/samples` or `$PRAGEXP_SAMPLES`, skipped and said so where absent), one folder
each (`hydra.run.dir`). Then the report, the scorecard and the datasets' figures over them. The manifest holds
the sha256 of every metrics.json, prediction file, data report and report table, and each metrics.json's
values, so that a metric a change adds is told apart from one it alters (`compare` lists added keys
separately: everything else must be identical). run.json (times, the commit) and logs are not compared: they
differ between any two runs. Give both runs the same OUT (it is emptied first) and move the first manifest
aside, and run both from a checkout at the same path (a git worktree moved to the other commit): paths printed
in tables and in data_report.json are then equal too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import TINY_DATA, TINY_MODEL  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = Path(os.environ.get("PRAGEXP_SAMPLES", ROOT.parent / "shared" / "samples"))  # or where they are
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "offline",
}
COMMON = ["logger=none", "trainer.accelerator=cpu", "callbacks.progress_bar=null"]
TINY_READER = TINY_MODEL["memnn"]  # the tests' tiny settings (tests/conftest.py), one source for both
TINY_GRICE = TINY_DATA["grice"]
TINY_CLASSIFIER = ["model=bert", "model.pretrained=tiny", "data.batch_size=8", "data.tiny_vocab_size=300"]
TINY_PQA = TINY_DATA["pragmaticqa"]


def llm_eval(task: str, path: Path, *extra: str) -> tuple[str, list[str]]:
    """An evaluation of `model=llm` on a benchmark's files."""
    return "pragexp.eval", [f"task={task}", "model=llm", f"data.path={path}", *extra]


# name -> (entry point, overrides); every kind of task and model, each dataset once or more
FIXTURE_RUNS = {
    "grice_recovery_memnn": (
        "pragexp.train",
        ["task=grice_recovery", "model=memnn", "trainer.max_epochs=1", *TINY_GRICE, *TINY_READER],
    ),
    "grice_qa_lstm": (
        "pragexp.train",
        ["task=grice_qa", "model=lstm", "trainer.max_epochs=1", *TINY_GRICE, *TINY_READER],
    ),
    "circa_bert": (
        "pragexp.train",
        [
            "task=circa",
            f"data.path={FIXTURES / 'circa' / 'circa-data.tsv'}",
            "trainer.max_epochs=1",
            *TINY_CLASSIFIER,
        ],
    ),
    "circa_majority": (
        "pragexp.train",
        [
            "task=circa",
            f"data.path={FIXTURES / 'circa' / 'circa-data.tsv'}",
            "model=majority",
            "trainer.max_epochs=1",
            "data.tiny_vocab_size=300",
        ],
    ),
    "pragmaticqa_fid": (
        "pragexp.train",
        ["task=pragmaticqa", "model=fid", "model.pretrained=tiny", "trainer.max_epochs=1", *TINY_PQA],
    ),
    "circa_llm": llm_eval(
        "circa", FIXTURES / "circa" / "circa-data.tsv", "llm=tiny", "data.tiny_vocab_size=300"
    ),
    "intentions_mc": llm_eval(
        "intentions_mc", FIXTURES / "intentions" / "hu_gpt4augmented_turn2_data.csv", "llm=tiny"
    ),
    "intentions_reply": llm_eval(
        "intentions_reply", FIXTURES / "intentions" / "hu_gpt4augmented_turn2_data.csv", "llm=reference_true"
    ),
    "ludwig": llm_eval("ludwig", FIXTURES / "ludwig", "llm=tiny"),
    "hu_pragmatics": llm_eval("hu_pragmatics", FIXTURES / "hu_pragmatics" / "prompts", "llm=tiny"),
    "bigbench": llm_eval(
        "bigbench_implicatures", FIXTURES / "bigbench_implicatures" / "implicatures.jsonl", "llm=tiny"
    ),
    "multiprageval": llm_eval("multiprageval", FIXTURES / "multiprageval", "llm=tiny"),
    "tomato": llm_eval("tomato", FIXTURES / "tomato", "llm=tiny"),
    "bigtom": llm_eval("bigtom", FIXTURES / "bigtom", "llm=tiny"),
    "hitom": llm_eval("hitom", FIXTURES / "hitom", "llm=tiny"),
    "opentom": llm_eval("opentom", FIXTURES / "opentom", "llm=tiny", "data.batch_stories=1"),
}
SMOLLM2 = ["llm=hf", "llm.model=smollm2"]
LUDWIG_150 = [
    "data.test_file=test_conversational_implicatures_first150.csv",
    "data.types_file=type_labels_shared_rows.csv",
]
SAMPLE_RUNS = {
    "sample_ludwig_smollm2": llm_eval("ludwig", SAMPLES / "ludwig", *SMOLLM2, *LUDWIG_150),
    "sample_ludwig_smollm2_declared": llm_eval(
        "ludwig",
        SAMPLES / "ludwig",
        *SMOLLM2,
        *LUDWIG_150,
        "prompt.template=declared",
        "prompt.chat=true",
        "prompt.scoring=generate",
        "prompt.max_new_tokens=16",
    ),
    "sample_circa_tiny": llm_eval("circa", SAMPLES / "circa" / "circa-sample.tsv", "llm=tiny"),
    "sample_hu_tiny": llm_eval("hu_pragmatics", SAMPLES / "hu_pragmatics" / "prompts", "llm=tiny"),
    "sample_intentions_mc_tiny": llm_eval("intentions_mc", SAMPLES / "intentions" / "sample.csv", "llm=tiny"),
    "sample_bigtom_tiny": llm_eval("bigtom", SAMPLES / "bigtom" / "sample.csv", "llm=tiny"),
    "sample_hitom_tiny": llm_eval("hitom", SAMPLES / "hitom" / "sample.json", "llm=tiny"),
    "sample_tomato_tiny": llm_eval("tomato", SAMPLES / "tomato" / "tomato_fb_sample.json", "llm=tiny"),
    "sample_multiprageval_tiny": llm_eval(
        "multiprageval", SAMPLES / "multiprageval" / "test_suite_sample.csv", "llm=tiny"
    ),
}
COMPARED = ("metrics.json", "data_report.json", ".jsonl", ".md", ".csv", ".tsv", ".png")


def run_all(out: Path) -> None:
    """Every run into out/runs/<name>, then the report over them into out/report; the manifest last."""
    shutil.rmtree(out, ignore_errors=True)
    runs = out / "runs"
    runs.mkdir(parents=True)
    env = {
        **os.environ,
        **OFFLINE,
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": str(ROOT),
        "PRAGEXP_OUTPUTS": str(out / "outputs"),
    }
    todo = dict(FIXTURE_RUNS)
    if SAMPLES.is_dir():
        todo.update(SAMPLE_RUNS)
    else:
        print(f"no shared samples at {SAMPLES}: their {len(SAMPLE_RUNS)} runs are skipped")
    seconds = {}
    for name, (entry, overrides) in todo.items():
        cache = out / "cache" / name  # a cold cache per run: nothing answers from an earlier run
        args = [*COMMON, *overrides, f"paths.cache_dir={cache}", f"hydra.run.dir={runs / name}"]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", entry, *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        seconds[name] = round(time.perf_counter() - start, 1)
        if done.returncode:
            sys.exit(f"{name} failed ({entry} {' '.join(args)}):\n{done.stderr[-3000:]}")
        print(f"{name}: {seconds[name]} s")
    report = out / "report"
    report.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pragexp.report",
            str(runs),
            "--out",
            str(report / "report.md"),
            "--scorecard",
            str(report / "scorecard.md"),
            "--figures",
            str(report / "figures"),
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    manifest = {
        "commit": commit(),
        "seconds": seconds,
        "files": digests(out, runs, report),
        "metrics": {p.parent.name: json.loads(p.read_text()) for p in sorted(runs.glob("*/metrics.json"))},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"{len(manifest['files'])} files in {out / 'manifest.json'}")


def digests(out: Path, *folders: Path) -> dict[str, str]:
    """sha256 of every compared file under the folders, by its path relative to out."""
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and ".hydra" not in path.parts and path.name.endswith(COMPARED):
                found[path.relative_to(out).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def added_figures(keys: list[str]) -> str:
    """Added metric keys named by their figure: 'test/brier (31 keys: its intervals, overall, per group)'."""
    stems = ("/".join(k.split("/")[:2]) for k in keys)
    figures = Counter(re.sub(r"_(stderr|ci95_low|ci95_high|n|rows)$", "", stem) for stem in stems)
    return ", ".join(f"{f} ({n} keys: its intervals, overall, per group)" for f, n in sorted(figures.items()))


def commit() -> str:
    described = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    )
    return described.stdout.strip()


def compare(a_path: Path, b_path: Path) -> int:
    """Prints what differs between two manifests; 0 where every file is identical, or differs only by added
    metrics (each named)."""
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    print(f"A: {a['commit']}  B: {b['commit']}")
    bad = 0
    for name in sorted(set(a["files"]) | set(b["files"])):
        if a["files"].get(name) == b["files"].get(name):
            continue
        if name.endswith("metrics.json") and name in a["files"] and name in b["files"]:
            run = Path(name).parent.name
            ma, mb = a["metrics"][run], b["metrics"][run]
            changed = sorted(k for k in ma if ma[k] != mb.get(k, object()))
            added = sorted(set(mb) - set(ma))
            if not changed:
                print(f"  {name}: every metric of A identical; added in B: {added_figures(added)}")
                continue
            print(f"  {name}: CHANGED {changed}")
        else:
            where = (
                "only in B"
                if name not in a["files"]
                else "only in A"
                if name not in b["files"]
                else "DIFFERS"
            )
            print(f"  {name}: {where}")
        bad += 1
    same = sum(a["files"].get(n) == b["files"].get(n) for n in a["files"])
    print(f"{same} of {len(a['files'])} files of A byte-identical in B; {bad} differ otherwise")
    print(
        "seconds A -> B: "
        + ", ".join(f"{k} {a['seconds'][k]} -> {b['seconds'].get(k)}" for k in a["seconds"])
    )
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run_all(Path(sys.argv[2]).resolve())
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
