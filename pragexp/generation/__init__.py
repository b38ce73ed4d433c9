"""LLMs behind one interface, for every task that puts a dataset in front of one (`model=llm`, the intentions'
judges), in sub-rooms by job:

- `backends/`: the interface (`base`) and one module per backend, named as the config choice that builds it
  (`hf`, `openai`, `vllm`, `reference`, `scripted_thinker`; `encoder` for the judges' encoders), with `served`
  (what a server serves) and `sampling` (hf's reproducible draws);
- `scoring/`: options scored by their log-likelihood: the one pairing (`requests`), the one scorer of causal
  LMs (`scorer`, its steps top to bottom; its forward passes and their shapes: `passes`; `causal_lm`,
  `head_cache`, `arrivals`) and the encoder-decoder scorer (`seq2seq_scorer`);
- `ranking`: the one ranking of options' scores (normalisation, calibration, the choice, ranks), with every
  protocol's tie rule named (`TIES`);
- `cache/`: the response cache every call goes through (`cached_backend`: a backend behind it, keyed by what
  decides an answer) and its storage (`store`, `files`, `records`, `index`, `compaction`; CLI
  `python -m pragexp.generation.cache`);
- `finetuning/`: an in-process LLM tuned (`finetune`) and its tuned weights saved, loaded and checked
  (`adapters`);
- `reasoning/`: answers after a thinking model's reasoning, under a budget (`thinking`), and its markers kept
  in decoding (`special_tokens`).

Imports prompting/, pretrained/, runs/ and utils/ only: nothing from models, tasks or data."""
