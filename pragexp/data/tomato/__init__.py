"""ToMATO (Shinoda et al., AAAI 2025): theory of mind in conversation as four-way multiple choice
(github.com/nttmdlab-nlp/ToMATO, dataset/*.json). Licence: the Meta Llama 3 Community License; the authors ask
that it be used for evaluation only, never for fine-tuning (task=tomato refuses training)."""
