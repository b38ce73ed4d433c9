"""Hi-ToM (He et al., Findings of EMNLP 2023): higher-order theory of mind (orders 0-4) in stories of agents
moving objects, with and without deception, as 15-way multiple choice (github.com/ying-hui-he/Hi-ToM_dataset,
Hi-ToM_data.json). Licence: Apache License 2.0."""
