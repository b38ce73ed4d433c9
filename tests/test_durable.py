"""What a kill or a full disk while writing leaves (pragexp.utils.durable, the writer of checkpoints and of a
tuned LLM's adapter folder): the previous file or folder, whole; nothing half-written in its place. A writer
is killed with SIGKILL half-way through its bytes (a child process that waits there); a full disk is a small
tmpfs (tests/small_disk.py: root only, skipped elsewhere)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from pragexp.generation.finetuning import adapters
from pragexp.utils import durable

# A child that writes `path` (a file, or an adapter folder) with half its content, says so, and waits to be
# killed.
KILLED_FILE = """
import sys, time
from pragexp.utils.durable import write_durably

def write(file):
    file.write(b"new" * 100_000)
    file.flush()
    print("half written", flush=True)
    time.sleep(120)
    file.write(b"the rest")

write_durably(sys.argv[1], write)
"""
KILLED_FOLDER = """
import sys, time
from types import SimpleNamespace
from pathlib import Path
from pragexp.generation.finetuning import adapters

class Model:
    def save_pretrained(self, folder):
        (Path(folder) / "adapter_config.json").write_text('{"new": true}')
        print("half written", flush=True)
        time.sleep(120)
        (Path(folder) / "adapter_model.safetensors").write_bytes(b"new")

backend = SimpleNamespace(finetune="lora", lora={}, base_identity=dict, trainable_model=Model)
adapters.save(backend, sys.argv[1])
"""


def killed_half_way(script: str, path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout.readline() == "half written\n"
    finally:
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL


def old_folder(path: Path) -> dict[str, str]:
    path.mkdir()
    files = {"adapter_config.json": '{"old": true}', "adapter_model.safetensors": "old weights"}
    for name, text in files.items():
        (path / name).write_text(text)
    return files


def contents(path: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in path.iterdir()}


def test_a_file_written_durably_replaces_the_previous_one_whole(tmp_path):
    path = tmp_path / "last.ckpt"
    path.write_bytes(b"old")
    assert durable.write_durably(path, lambda file: file.write(b"new")) == path
    assert path.read_bytes() == b"new" and os.listdir(tmp_path) == ["last.ckpt"]


def test_a_writer_killed_half_way_leaves_the_previous_file(tmp_path):
    path = tmp_path / "last.ckpt"
    path.write_bytes(b"old checkpoint")
    killed_half_way(KILLED_FILE, path)
    assert path.read_bytes() == b"old checkpoint"
    partial = tmp_path / ".last.ckpt.partial"  # what the killed writer had written, beside
    assert partial.stat().st_size == 300_000
    durable.write_durably(path, lambda file: file.write(b"next"))  # the next write goes over it
    assert path.read_bytes() == b"next" and os.listdir(tmp_path) == ["last.ckpt"]


@pytest.mark.slow  # the child imports the LLM stack
def test_an_adapter_folder_written_by_a_writer_killed_half_way_is_the_previous_one(tmp_path):
    folder = tmp_path / "last.peft"
    before = old_folder(folder)
    killed_half_way(KILLED_FOLDER, folder)
    assert contents(folder) == before
    (leftover,) = [p for p in tmp_path.iterdir() if p != folder]  # the killed writer's folder, beside
    assert leftover.name == ".last.peft.partial" and contents(leftover) == {
        "adapter_config.json": '{"new": true}'
    }

    class Model:
        def save_pretrained(self, folder):
            (Path(folder) / "adapter_model.safetensors").write_text("next")

    backend = type(
        "Backend", (), {"finetune": "lora", "lora": {}, "base_identity": dict, "trainable_model": Model}
    )
    adapters.save(backend(), folder)  # the next save of the folder writes over what the killed one left
    assert os.listdir(tmp_path) == ["last.peft"] and contents(folder)["adapter_model.safetensors"] == "next"


@pytest.mark.parametrize("swap", [True, False], ids=["swapped at once", "renamed aside (no renameat2)"])
def test_a_folder_replaces_the_previous_one_whole(tmp_path, monkeypatch, swap):
    folder, new = tmp_path / "last.peft", tmp_path / ".last.peft.new"
    old_folder(folder)
    new.mkdir()
    (new / "adapter_config.json").write_text("{}")
    if not swap:
        monkeypatch.setattr(durable, "_exchange", lambda a, b: False)
    durable.replace_folder(new, folder)
    assert contents(folder) == {"adapter_config.json": "{}"} and os.listdir(tmp_path) == ["last.peft"]


def test_renameat2_swaps_two_folders_here(tmp_path):
    """Where the tests run (Linux, a local disk), the swap is the atomic one, not the fallback."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    assert durable._exchange(a, b)
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"


def test_a_full_disk_stops_a_write_naming_the_file_and_leaves_the_previous_one(small_disk):
    path = small_disk / "last.ckpt"
    path.write_bytes(b"old checkpoint")
    with pytest.raises(OSError, match=rf"{path} \(not written; a previous last.ckpt is unchanged\)") as error:
        durable.write_durably(path, lambda file: file.write(b"\0" * 8 * 2**20))  # 8 MiB on a 4 MiB disk
    assert error.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"old checkpoint" and os.listdir(small_disk) == ["last.ckpt"]


def test_a_full_disk_stops_an_adapter_folder_and_leaves_the_previous_one(small_disk):
    class Model:
        def save_pretrained(self, folder):
            (Path(folder) / "adapter_model.safetensors").write_bytes(b"\0" * 8 * 2**20)

    folder = small_disk / "last.peft"
    before = old_folder(folder)
    backend = type(
        "Backend", (), {"finetune": "lora", "lora": {}, "base_identity": dict, "trainable_model": Model}
    )
    with pytest.raises(OSError) as error:
        adapters.save(backend(), folder)
    assert error.value.errno == errno.ENOSPC
    assert contents(folder) == before and os.listdir(small_disk) == ["last.peft"]
