"""GRICE (Zheng et al., 2021): dialogues with implicatures.

schema.py      names shared by the generator and the readers (implicature types, subtopics)
io.py          reader of the official `impl_dial` v0.1 files (released or generated)
examples.py    dialogues -> model examples for recovery and QA (word ids or subword text)
datamodule.py  GriceDataModule (generated and cached, or official files)
generator/     pragexp's grammar generator; CLI: python -m pragexp.data.grice
"""
