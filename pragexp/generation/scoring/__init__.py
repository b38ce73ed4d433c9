"""Options scored by their log-likelihood: what a request is and the one pairing of a context with a
continuation (`requests`), the one scorer of causal LMs (`scorer`: its steps top to bottom; `passes`: each
forward pass and its shape; `causal_lm`: the model as the scorer calls it; `head_cache`: request heads' KV
caches kept between calls; `arrivals`: each request's scores handed over as soon as they are all computed) and
the encoder-decoder scorer (`seq2seq_scorer`)."""
