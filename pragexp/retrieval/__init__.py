"""Dense retrieval without Lightning: passages, bi-encoders, FAISS indexes (CPU and GPU) and the cache
that keeps built indexes by a hash of what went in. `python -m pragexp.retrieval build|search|info`."""
