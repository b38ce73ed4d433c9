"""Data modules that datasets build on: `SplitsDataModule` (base: the loaders of train/val/test and the data
report), text classification (tokenizers, prompt items, checkpoints) and text-pair classification (NLI,
BoolQ)."""
