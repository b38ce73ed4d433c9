"""LUDWIG (Ruis et al. 2023, the Goldilocks of pragmatic understanding): the released conversational
implicature pairs, prompt templates and implicature-type labels (github.com/LauraRuis/do-pigs-fly, data/)."""
