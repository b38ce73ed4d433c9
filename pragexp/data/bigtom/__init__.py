"""BigToM (Gandhi et al., NeurIPS 2023): theory of mind in stories, 25 two-way questions built from each story
line (github.com/cicl-stanford/procedural-evals-tom, data/bigtom/bigtom.csv). Licence: MIT (c) 2023 Kanishk
Gandhi, Jan-Philipp Fränken, Tobias Gerstenberg, Noah D. Goodman: use, copy, modify and redistribute,
fine-tuning included, keeping the copyright notice."""
