"""A thinking model's reasoning: an answer generated after it, under a reasoning budget (`thinking`), and its
markers kept when a reply is decoded (`special_tokens`, which the in-process backends decode with)."""
