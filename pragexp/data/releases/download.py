"""One archive downloaded to a file, never half-written where the finished file is expected: bytes go to
`<file>.part`, which becomes `<file>` by a rename once the body is whole. A body cut short (a dropped
connection, a server that dies) is asked for again from where it stopped (an HTTP Range request; a server
that ignores it answers 200 and the download restarts), a few times, and a later run resumes the same way.
A server that cannot be reached at all is `Unreachable`."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import httpx
from tqdm.auto import tqdm

ATTEMPTS = 4
BACKOFF_S = 1.0  # doubled after each failed attempt
TIMEOUT = httpx.Timeout(30.0, connect=15.0)


class DownloadError(OSError):
    pass


class Unreachable(DownloadError):
    """No connection at all: no network, a name that does not resolve, a refused connection."""


def _start(response: httpx.Response, have: int) -> int:
    """Where the body that arrives starts in the file: `have` for a 206 that continues the part file, 0 for
    a whole body (the part file is rewritten)."""
    if response.status_code == 206:
        match = re.match(r"bytes (\d+)-", response.headers.get("content-range", ""))
        if match and int(match.group(1)) == have:
            return have
        raise DownloadError(f"the server resumed at {response.headers.get('content-range')!r}, not at {have}")
    response.raise_for_status()
    return 0


def _receive(client: httpx.Client, url: str, part: Path, label: str) -> None:
    have = part.stat().st_size if part.is_file() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code == 416:  # nothing left to send from `have`: the part file is not this body
            part.unlink()
            raise DownloadError("the server refused to resume: starting again")
        start = _start(response, have)
        length = response.headers.get("content-length")
        total = start + int(length) if length is not None else None
        with (
            open(part, "ab" if start else "wb") as f,
            tqdm(total=total, initial=start, unit="B", unit_scale=True, desc=label, leave=False) as bar,
        ):
            for chunk in response.iter_raw():  # the bytes as sent (Range counts these), as they arrive
                f.write(chunk)
                bar.update(len(chunk))
            f.flush()
            os.fsync(f.fileno())


def _gave_up(url: str, part: Path, exc: Exception) -> DownloadError:
    got = part.stat().st_size if part.is_file() else 0
    kept = f"; {got:,} bytes kept in {part}, the next run resumes from there" if got else ""
    kind = Unreachable if isinstance(exc, httpx.ConnectError) else DownloadError
    return kind(f"{url}: {type(exc).__name__}: {exc} (after {ATTEMPTS} attempts{kept})")


def download(url: str, dest: Path, label: str, client: httpx.Client | None = None) -> Path:
    """`url` saved at `dest` (resuming `dest.part` if an earlier run left one)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    own = client is None
    client = client or httpx.Client(follow_redirects=True, timeout=TIMEOUT)
    try:
        for attempt in range(ATTEMPTS):
            try:
                _receive(client, url, part, label)
                os.replace(part, dest)
                return dest
            except httpx.HTTPStatusError as exc:
                raise DownloadError(f"{url}: the server answered {exc.response.status_code}") from exc
            except (httpx.TransportError, DownloadError) as exc:  # cut halfway, timed out, refused: again
                if attempt == ATTEMPTS - 1:
                    raise _gave_up(url, part, exc) from exc
            time.sleep(BACKOFF_S * 2**attempt)
    finally:
        if own:
            client.close()
    raise AssertionError("unreachable")  # the loop returns or raises
