"""What several datasets share, by what it is:

files/         readers of file formats (csv_files, jsonl, pair_readers)
datamodules/   base data modules (base: SplitsDataModule; text_classification, pair_classification)
tokens/        tokenizers (tokenization) and the word vocabulary (vocab)
splits.py      seeded splits: matched, carved out of train, by group
prompt_examples.py   examples and batches for a model that reads prompts, and PromptDataModule
"""
