"""OpenToM (Xu et al., ACL 2024): theory of mind in longer stories with explicit personalities and intentions,
coarse and fine locations, multi-hop fullness and accessibility, attitudes (github.com/seacowx/OpenToM,
data/opentom_data/). Licence: CC BY-NC 4.0 (no commercial use); the authors ask that it be used for evaluation
only, never for training or fine-tuning, and not be sent where it may be trained on (task=opentom refuses
training)."""
