"""LLM generation for the evaluation-only tasks: one small backend interface (`backend`), its
implementations (`hf`, `openai_compat`, `vllm_backend`, `reference`, `encoder`), the on-disk
response cache every call goes through (`cache`), the papers' prompts (`prompts`) and the judges
that compare a reply with reference replies (`judges`). Nothing here imports tasks or data."""
