"""The LLM backends behind one interface (`base.LLMBackend`), a module per backend named as the config choice
that builds it: `hf` (llm=hf, llm=tiny: transformers in-process, the one that fine-tunes; its draws:
`sampling`), `openai` (llm=openai: any OpenAI-compatible server; what a server serves, as the cache names it:
`served`), `vllm` (llm=vllm), `reference` (llm=reference_true, llm=reference_literal: the dataset's own
replies), `scripted_thinker` (llm=scripted_thinker: a thinking model's reply shapes, no model) and `encoder`
(the sentence encoders of judge=embedding and judge=llm2vec)."""
