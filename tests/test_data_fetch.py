"""`python -m pragexp.data fetch`: a release downloaded from a local mirror (an archive built from
tests/fixtures at test time, GitHub's layout, on 127.0.0.1), every file checked against a test registry; a
wrong digest, a body cut short, a server that dies halfway and no network at all, each refused naming what
it must, never leaving a half-written file where a finished one is expected; --list; the mirror variable."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from release_server import ArchiveServer, github_archive, registry_yaml

from pragexp.data.__main__ import main
from pragexp.data.releases import download
from pragexp.data.releases.check import MARKER, DigestMismatch, file_digests, state
from pragexp.data.releases.fetcher import FetchError, archive_path, fetch
from pragexp.data.releases.registry import GITHUB, load_registry

REPO, COMMIT = "someone/tom-release", "0123456789abcdef0123456789abcdef01234567"
FILES = {
    "Hi-ToM_data.json": FIXTURES / "hitom" / "Hi-ToM_data.json",
    "data/bigtom/bigtom.csv": FIXTURES / "bigtom" / "bigtom.csv",
}
ROUTE = f"/{REPO}/archive/{COMMIT}.tar.gz"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(download, "BACKOFF_S", 0.0)


def digests(path) -> dict:
    size, sha256, blob = file_digests(path)
    return {"size": size, "sha256": sha256, "git_blob": blob}


def test_registry(tmp_path, wrong: str | None = None):
    """The one-release registry of the fixture files (one digest made wrong where asked)."""
    files = {name: digests(path) for name, path in FILES.items()}
    if wrong:
        files[wrong]["sha256"] = "0f" * 32
    path = registry_yaml(tmp_path / "registry.yaml", "toy", REPO, COMMIT, files)
    return load_registry(path)["toy"]


test_registry.__test__ = False  # a helper, not a test


def archive() -> bytes:
    return github_archive(f"tom-release-{COMMIT}", {name: p.read_bytes() for name, p in FILES.items()})


def test_a_release_is_fetched_from_the_mirror_and_every_file_checked(tmp_path, monkeypatch):
    release, data = test_registry(tmp_path), tmp_path / "data"
    with ArchiveServer({ROUTE: archive()}) as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        said = fetch(release, data)
    assert "fetched and verified (2 files" in said and server.requests == [(ROUTE, None)]
    for name, source in FILES.items():
        assert (data / "toy" / name).read_bytes() == source.read_bytes()
    assert (data / "toy" / MARKER).is_file() and state(release, data) == "verified"
    assert not archive_path(data, release).exists()  # the archive is not kept once installed
    with ArchiveServer({}) as server:  # a second fetch checks the copy here and downloads nothing
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        assert "here and verified" in fetch(release, data) and server.requests == []


def test_a_wrong_digest_is_refused_naming_the_file_and_both_digests(tmp_path, monkeypatch):
    release, data = test_registry(tmp_path, wrong="data/bigtom/bigtom.csv"), tmp_path / "data"
    with ArchiveServer({ROUTE: archive()}) as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        with pytest.raises(DigestMismatch) as refused:
            fetch(release, data)
    actual = digests(FILES["data/bigtom/bigtom.csv"])["sha256"]
    assert "data/bigtom/bigtom.csv" in str(refused.value)
    assert actual in str(refused.value) and "0f" * 32 in str(refused.value)
    assert state(release, data) == "absent" and not archive_path(data, release).exists()


def test_a_truncated_body_is_refused_and_leaves_no_finished_file(tmp_path, monkeypatch):
    release, data = test_registry(tmp_path), tmp_path / "data"
    with ArchiveServer({ROUTE: archive()}, cut="truncate") as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        with pytest.raises(FetchError) as refused:
            fetch(release, data)
    assert server.url + ROUTE in str(refused.value) and "resumes" in str(refused.value)
    assert len(server.requests) == download.ATTEMPTS and server.requests[1][1].startswith("bytes=")
    assert not archive_path(data, release).exists() and state(release, data) == "absent"


def test_a_server_that_dies_halfway_is_resumed_by_the_next_run(tmp_path, monkeypatch):
    release, data, body = test_registry(tmp_path), tmp_path / "data", archive()
    with ArchiveServer({ROUTE: body}, cut="die") as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        with pytest.raises(FetchError) as refused:
            fetch(release, data)
        assert server.url + ROUTE in str(refused.value)
    part = archive_path(data, release).with_name(archive_path(data, release).name + ".part")
    assert part.stat().st_size == len(body) // 2 and not archive_path(data, release).exists()
    with ArchiveServer({ROUTE: body}) as again:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", again.url)
        fetch(release, data)
    assert again.requests == [(ROUTE, f"bytes={len(body) // 2}-")]  # resumed, not started again
    assert state(release, data) == "verified" and not part.exists()


def test_offline_the_error_names_the_release_the_url_and_where_to_put_a_copy(tmp_path, monkeypatch):
    release, data = test_registry(tmp_path), tmp_path / "data"
    with ArchiveServer({}) as server:
        gone = server.url  # a port that answered once, closed now: connection refused
    monkeypatch.setenv("PRAGEXP_DATA_MIRROR", gone)
    with pytest.raises(FetchError) as refused:
        fetch(release, data)
    message = str(refused.value)
    assert "A test release (toy)" in message and gone + ROUTE in message
    assert str(archive_path(data, release)) in message and "python -m pragexp.data fetch toy" in message
    archive_path(data, release).write_bytes(archive())  # the copy put there by hand is used as it is
    assert "fetched and verified" in fetch(release, data)


def test_list_prints_each_release_with_size_licence_training_and_state(tmp_path, capsys):
    registry = registry_yaml(
        tmp_path / "registry.yaml", "toy", REPO, COMMIT, {n: digests(p) for n, p in FILES.items()}
    )
    assert main(["fetch", "--list", "--registry", str(registry), "--data-dir", str(tmp_path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("toy "))
    assert row.split() == ["toy", "0.0", "MB", "2", "CC", "BY", "4.0", "evaluation", "only", "absent"]
    default = main(["fetch", "--list", "--data-dir", str(tmp_path)])
    listed = capsys.readouterr().out
    assert default == 0 and all(f"\n{name} " in listed for name in ("hu_pragmatics", "opentom", "tomato"))


def test_the_cli_fetches_by_name_and_fails_naming_an_unknown_one(tmp_path, monkeypatch, capsys):
    registry = registry_yaml(
        tmp_path / "registry.yaml", "toy", REPO, COMMIT, {n: digests(p) for n, p in FILES.items()}
    )
    args = ["--registry", str(registry), "--data-dir", str(tmp_path / "data")]
    assert main(["fetch", "nosuch", *args]) == 2 and "the releases are: toy" in capsys.readouterr().err
    with ArchiveServer({ROUTE: archive()}) as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        assert main(["fetch", "--all", *args]) == 0
    assert "evaluation only, never train on it" in capsys.readouterr().out


def test_the_mirror_variable_replaces_github(monkeypatch):
    release = load_registry()["hitom"]
    monkeypatch.delenv("PRAGEXP_DATA_MIRROR", raising=False)
    assert release.archive_url() == f"{GITHUB}/ying-hui-he/Hi-ToM_dataset/archive/{release.commit}.tar.gz"
    monkeypatch.setenv("PRAGEXP_DATA_MIRROR", "http://mirror.lab:8080/gh/")
    assert (
        release.archive_url()
        == f"http://mirror.lab:8080/gh/ying-hui-he/Hi-ToM_dataset/archive/{release.commit}.tar.gz"
    )


def test_files_put_by_hand_are_checked_and_kept_with_no_download(tmp_path, monkeypatch):
    release, data = test_registry(tmp_path), tmp_path / "data"
    for name, source in FILES.items():
        (data / "toy" / name).parent.mkdir(parents=True, exist_ok=True)
        (data / "toy" / name).write_bytes(source.read_bytes())
    assert state(release, data) == "unverified"
    monkeypatch.setenv("PRAGEXP_DATA_MIRROR", "http://127.0.0.1:1")  # nothing may be downloaded
    assert "here and verified" in fetch(release, data) and state(release, data) == "verified"
    (data / "toy" / "Hi-ToM_data.json").write_text("{}")  # changed after the fetch: fetched again
    with ArchiveServer({ROUTE: archive()}) as server:
        monkeypatch.setenv("PRAGEXP_DATA_MIRROR", server.url)
        assert "fetched and verified" in fetch(release, data) and len(server.requests) == 1
    assert (data / "toy" / "Hi-ToM_data.json").read_bytes() == FILES["Hi-ToM_data.json"].read_bytes()


def test_a_registry_entrys_digests_come_from_the_repository_itself(tmp_path):
    """pragexp.data.releases.digests (how registry.yaml was made) reads a commit's tree: the digests it
    prints are the fetch check's own (size, SHA-256, git blob id of the bytes)."""
    import subprocess

    from pragexp.data.releases.digests import tree_files

    repo = tmp_path / "repo"
    (repo / "data" / "bigtom").mkdir(parents=True)
    for name, source in FILES.items():
        (repo / name).write_bytes(source.read_bytes())
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "release"], check=True)
    found = tree_files(str(repo / ".git"), "HEAD", ["data/*/*.csv", "*.json"])
    assert {f["path"]: {k: v for k, v in f.items() if k != "path"} for f in found} == {
        name: digests(path) for name, path in FILES.items()
    }
    with pytest.raises(SystemExit, match=r"no file matches \['\*\.txt'\]"):
        tree_files(str(repo / ".git"), "HEAD", ["*.txt"])
