"""Dense retrieval without Lightning: the retriever's spec, passages, bi-encoders, FAISS indexes (CPU and GPU)
and the store that keeps a corpus's embeddings and index by a hash of what went in. Nothing here imports
pragexp.data or pragexp.tasks: the corpus and the tokenizers are handed in (PragmatiCQA's CLI, which builds
them, is `python -m pragexp.data.pragmaticqa build|info|search`)."""
