"""Seeded choice helper for hot paths."""


def choice(rng, seq):
    """Like ``rng.choice`` (and as deterministic), ~3x cheaper: one float instead of rejection sampling."""
    return seq[int(rng.random() * len(seq))]


def randint(rng, lo, hi):
    """Like ``rng.randint`` (inclusive bounds), from one float."""
    return lo + int(rng.random() * (hi - lo + 1))


def sample(rng, seq, k):
    """k distinct elements in random order (partial Fisher-Yates on a copy)."""
    pool = list(seq)
    n = len(pool)
    for i in range(k):
        j = i + int(rng.random() * (n - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def shuffle(rng, items):
    """In-place Fisher-Yates shuffle like ``rng.shuffle``, from floats (cheaper, as deterministic)."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
