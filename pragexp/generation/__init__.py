"""LLMs behind one interface, for every task that puts a dataset in front of one (`model=llm`, the intentions):
the backends (`backend`: the interface; `hf`, `openai_compat`, `vllm_backend`, `reference`, `encoder`), the one
pairing of a context with a continuation (`requests`), the one scorer of options (`scorer`) and the choice made
from its scores (`ranking`), the response cache every call goes through (`cache`; its files: `response_cache`), fine-tuning (`finetune`), tuned
weights saved, loaded and checked (`adapters`) and the intentions' judges (`intention_judges`). Imports prompting/,
pretrained/, runs/ and utils/ only: nothing from models, tasks or data."""
