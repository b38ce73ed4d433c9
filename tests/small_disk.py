"""A full disk, for the tests of what a write leaves when the disk fills: a small tmpfs mounted for one test
and unmounted after. Mounting needs root (CI runs as root); elsewhere the tests that use it are skipped,
saying why."""

from __future__ import annotations

import os
import subprocess

import pytest


def mount_small_disk(folder, size: str) -> None:
    """Mounts a tmpfs of `size` (mount's syntax: 4m) on the empty `folder`, or skips the test saying why
    not."""
    if os.geteuid() != 0:
        pytest.skip(f"a full disk is a small tmpfs here, which only root may mount (uid {os.geteuid()})")
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if proc.returncode:
        pytest.skip(f"could not mount a tmpfs on {folder}: {proc.stderr.strip()}")


def unmount(folder) -> None:
    subprocess.run(["umount", str(folder)], check=True, capture_output=True)


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB disk of its own (a tmpfs) at tmp_path/disk, unmounted after the test."""
    disk = tmp_path / "disk"
    mount_small_disk(disk, "4m")
    yield disk
    unmount(disk)
