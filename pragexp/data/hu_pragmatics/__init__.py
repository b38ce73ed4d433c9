"""Hu et al. 2022, a fine-grained comparison of pragmatic understanding in humans and language models: the
released prompt files and the human answers (github.com/jennhu/lm-pragmatics)."""
