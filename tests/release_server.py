"""A local HTTP server for the fetch tests: GitHub's archive paths on 127.0.0.1 (port 0), served from bytes
made at test time, with the failures a download meets: a body cut short, a server that dies halfway. It
answers Range requests as GitHub's mirrors may, and records what it was asked."""

from __future__ import annotations

import io
import re
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def github_archive(top: str, files: dict[str, bytes]) -> bytes:
    """A tar.gz laid out as GitHub's: every file under one folder `<repo>-<commit>/`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class ArchiveServer:
    """`routes`: URL path -> bytes. `cut`: 'truncate' sends half of every body (announcing all of it) and
    closes the connection; 'die' does that once and then stops the whole server."""

    def __init__(self, routes: dict[str, bytes], cut: str | None = None):
        self.routes, self.cut, self.requests = routes, cut, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet: pytest shows what failed
                pass

            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                body = server.routes.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = int(re.match(r"bytes=(\d+)-", self.headers.get("Range") or "bytes=0-").group(1))
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                rest = body[start:]
                if server.cut is None:
                    self.wfile.write(rest)
                    return
                self.wfile.write(rest[: len(rest) // 2])
                self.wfile.flush()
                self.close_connection = True
                if server.cut == "die":
                    threading.Thread(target=server.stop, daemon=True).start()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ArchiveServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __exit__(self, *exc) -> None:
        if self.thread.is_alive():
            self.stop()


def registry_yaml(path: Path, name: str, repo: str, commit: str, files: dict[str, dict]) -> Path:
    """A registry with one release, `files`: path -> {size, sha256, git_blob}."""
    lines = [
        "releases:",
        f"  {name}:",
        "    title: A test release",
        "    source: github",
        f"    repo: {repo}",
        f"    commit: {commit}",
        "    licence: CC BY 4.0",
        "    licence_note: invented for the tests",
        "    training: evaluation only",
        "    files:",
    ]
    for file_path, digests in files.items():
        lines += [f"      - path: {file_path}", *(f"        {k}: {v}" for k, v in digests.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
