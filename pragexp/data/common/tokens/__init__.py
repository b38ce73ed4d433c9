"""Text as token ids: tokenizers (trained on the data or a pretrained model's) and the word vocabulary."""
