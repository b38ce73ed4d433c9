"""Atomic outputs: all or nothing, and readable like any other file."""

import os
import stat

import pytest

from pragexp.utils.io import atomic_output, atomic_write_text


def test_atomic_output_gives_the_usual_mode_and_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out" / "metrics.json"
    atomic_write_text(target, "{}\n")
    umask = os.umask(0)
    os.umask(umask)
    assert target.read_text() == "{}\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "{}\n"  # the old content stays
    assert sorted(p.name for p in target.parent.iterdir()) == ["metrics.json"]  # no temp file left
