"""pragexp: experiments on pragmatic reasoning in dialogue (GRICE, Circa, PragmatiCQA, intentions)."""

__version__ = "0.1.0"
