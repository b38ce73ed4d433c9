"""The `files:` of a registry entry computed from a clone of the release (how registry.yaml's digests were
made): `python -m pragexp.data.releases.digests GIT_DIR COMMIT PATTERN...` prints, for every file of the
commit's tree that a pattern matches (fnmatch, on the path in the repository), its size, SHA-256 and git
blob id, read from the repository itself. A file whose bytes the clone lacks (a partial clone's large blobs)
gets its blob id alone, which is what the commit's tree records."""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import subprocess
import sys


def _git(git_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True)


def tree_files(git_dir: str, commit: str, patterns: list[str]) -> list[dict]:
    """{path, size, sha256, git_blob} per matching file; size and sha256 None where the blob is absent."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", commit)
    if listing.returncode:
        raise SystemExit(f"{git_dir}: {listing.stderr.decode().strip()}")
    found = []
    for record in filter(None, listing.stdout.decode().split("\0")):
        meta, path = record.split("\t", 1)
        kind, blob = meta.split()[1:3]
        if kind != "blob" or not any(fnmatch.fnmatchcase(path, p) for p in patterns):
            continue
        data = _git(git_dir, "cat-file", "blob", blob)
        if data.returncode:
            found.append({"path": path, "size": None, "sha256": None, "git_blob": blob})
            continue
        if hashlib.sha1(b"blob %d\0" % len(data.stdout) + data.stdout).hexdigest() != blob:
            raise SystemExit(f"{git_dir}: {path}: the bytes read are not blob {blob}")
        sha256 = hashlib.sha256(data.stdout).hexdigest()
        found.append({"path": path, "size": len(data.stdout), "sha256": sha256, "git_blob": blob})
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(f["path"], p) for f in found)]
    if unmatched:
        raise SystemExit(f"{git_dir} at {commit}: no file matches {unmatched}")
    return found


def as_yaml(files: list[dict]) -> str:
    def value(v):
        return "null" if v is None else v

    return "".join(
        f'      - path: "{f["path"]}"\n        size: {value(f["size"])}\n'
        f"        sha256: {value(f['sha256'])}\n        git_blob: {f['git_blob']}\n"
        for f in files
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pragexp.data.releases.digests", description=__doc__)
    parser.add_argument("git_dir", help="the clone's .git folder (or a bare repository)")
    parser.add_argument("commit")
    parser.add_argument("patterns", nargs="+", metavar="PATTERN")
    args = parser.parse_args(argv)
    sys.stdout.write("    files:\n" + as_yaml(tree_files(args.git_dir, args.commit, args.patterns)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
