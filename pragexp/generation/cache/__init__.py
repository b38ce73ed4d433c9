"""The response cache: a backend put behind it, keyed by what decides an answer (`cached_backend`), and its
storage (`store`, `files`, `records`, `index`, `segments`, `compaction`): a folder that any number of
processes on any number of hosts read and write at once, with no lock.

Guarantees. Each writing process appends to a file of its own (`files`: named by its start time, host, pid and
a random token), so no two processes ever write one file and nothing is shared but the folder: no lock, no
shared memory, no atomic append across hosts, which network file systems (NFS, Lustre, GPFS) do not give
reliably. Each answer is a record framed by its length and a CRC-32 of its header, key and value (`records`),
handed to the OS as it arrives (each answer, or each batch, as the model gives it back) and fsync'd at most
once a second and when the file is closed: a process killed at any point (SIGKILL, preemption, out of memory)
keeps every answer it had written, and a record torn by the kill is found, skipped and named in the log. A
reader indexes every file of the folder at its first lookup and reads on where other writers appended when
keys are missing (`index`), holding in memory only the files still being written and small ones: each large
finished file has an immutable index on disk, memory-mapped (`segments`); each answer is read again and
checked (checksum and key) when it is looked up, so damaged bytes anywhere give a miss and a warning naming
the file, never a wrong answer. A full disk stops the run with an error naming the folder, and what was stored
before stays whole. Two different answers under one key (a model that is not deterministic, asked by two jobs
at once) are settled alike by every reader, whatever it read first: the answer whose JSON sorts first; such
keys are counted in the log. What it relies on is what network file systems do give: what one writer flushed
is seen by others, and a rename is atomic. `python -m pragexp.generation.cache compact <folder>` merges the
files whose writers are done (closed, or their process gone, or another host's file idle a day) into one
sorted pack, atomically, and never removes a file that a process may still write (`compaction`).

Beside the answers, the identities they were keyed under (`identities`); in each run's folder, the keys it
used (`answers`); a run answered by the cache alone under a recorded identity (`replay`); the answers some
runs used, shipped as one checked tar (`packs`: `python -m pragexp.generation.cache pack|unpack`).
"""

from pragexp.generation.cache.compaction import Compaction, compact
from pragexp.generation.cache.files import CacheWriteError
from pragexp.generation.cache.store import ResponseCache

__all__ = ["CacheWriteError", "Compaction", "ResponseCache", "compact"]
