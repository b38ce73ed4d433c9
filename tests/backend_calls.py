"""What the LLM backends' tests share: a backend's one scoring call read back as log-likelihoods."""

from pragexp.generation.scoring.requests import ChoiceRequest


def logliks(backend, context: str, continuations: list[str]) -> list[float]:
    """log p(continuation | context) for each continuation, through the backend's one scoring call."""
    return [s.loglik for s in backend.loglikelihood_many([ChoiceRequest(context, tuple(continuations))])[0]]
