"""Writes a tiny Llama and its tokenizer as a GGUF file with the `gguf` package, laid out as llama.cpp's
converter lays out real ones (tensor names, q/k rows permuted for its rotary layout), so the tests load a
GGUF file through transformers in a second instead of de-quantising SmolLM2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SPECIAL = ("<pad>", "<s>", "</s>")
LAYER_TENSORS = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def _rotary_rows(weight: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's order of a q/k projection's rows (transformers undoes it when it loads the file)."""
    return (
        weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def write_tiny_gguf(path: Path, model, tokenizer) -> Path:
    import gguf

    cfg = model.config
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(cfg.max_position_embeddings)
    writer.add_embedding_length(cfg.hidden_size)
    writer.add_block_count(cfg.num_hidden_layers)
    writer.add_feed_forward_length(cfg.intermediate_size)
    writer.add_head_count(cfg.num_attention_heads)
    writer.add_head_count_kv(cfg.num_key_value_heads)
    writer.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)
    writer.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    writer.add_vocab_size(len(tokenizer))
    raw = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab = [token for token, _ in sorted(raw["model"]["vocab"].items(), key=lambda kv: kv[1])]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(vocab)
    writer.add_token_types([3 if t in SPECIAL else 1 for t in vocab])  # 3: control tokens
    writer.add_token_merges([" ".join(m) if isinstance(m, list) else m for m in raw["model"]["merges"]])
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_chat_template(tokenizer.chat_template)
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    names["lm_head.weight"] = "output.weight"
    for i in range(cfg.num_hidden_layers):
        names |= {
            f"model.layers.{i}.{ours}.weight": f"blk.{i}.{theirs}.weight"
            for ours, theirs in LAYER_TENSORS.items()
        }
    state = model.state_dict()
    for ours, theirs in names.items():
        weight = state[ours].numpy().astype(np.float32)
        if ours.endswith("q_proj.weight"):
            weight = _rotary_rows(weight, cfg.num_attention_heads)
        elif ours.endswith("k_proj.weight"):
            weight = _rotary_rows(weight, cfg.num_key_value_heads)
        writer.add_tensor(theirs, weight)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
