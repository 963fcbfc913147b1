# Sourced by scripts/setup.sh after CARGO_TARGET_DIR is set.
#
# Semantic search runs the embedding model on ONNX Runtime, which the engine
# loads at run time (the `ort` crate's load-dynamic mode, so nothing is
# downloaded while building). This fetches the one shared library it needs
# from the PyPI `onnxruntime` wheel, checks the wheel's hash, and puts the
# library next to the binaries cargo builds, where `pad serve` looks first.
#
# The version must be one the `ort` crate accepts: ort 2.0.0-rc.15 (pinned by
# fastembed 7.5) needs ONNX Runtime 1.24 or newer.

ORT_VERSION=1.31.1
ORT_WHEEL=onnxruntime-${ORT_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl
ORT_WHEEL_SHA256=5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f
ORT_LIB=libonnxruntime.so.${ORT_VERSION}

ort_cache="$CARGO_TARGET_DIR/onnxruntime-$ORT_VERSION"
if [ ! -f "$ort_cache/$ORT_LIB" ]; then
    if [ "$(uname -m)" != x86_64 ] || [ "$(uname -s)" != Linux ]; then
        echo "setup: no pinned ONNX Runtime for $(uname -s)/$(uname -m); semantic search needs" >&2
        echo "       ONNX Runtime >= 1.24: set ORT_DYLIB_PATH to its shared library" >&2
    else
        ensure_pip
        echo "setup: fetching ONNX Runtime $ORT_VERSION from PyPI" >&2
        ort_tmp="$(mktemp -d)"
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --platform manylinux_2_28_x86_64 --python-version 3.11 \
            -d "$ort_tmp" "onnxruntime==$ORT_VERSION"
        echo "$ORT_WHEEL_SHA256  $ort_tmp/$ORT_WHEEL" | sha256sum --check --quiet - || {
            echo "setup: $ORT_WHEEL does not have the pinned sha256; refusing it" >&2
            rm -rf "$ort_tmp"
            exit 1
        }
        mkdir -p "$ort_cache"
        python3 - "$ort_tmp/$ORT_WHEEL" "$ort_cache" "$ORT_LIB" <<'EOF'
import shutil, sys, zipfile
wheel, dest, name = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(f"onnxruntime/capi/{name}") as src, \
        open(f"{dest}/{name}.part", "wb") as out:
    shutil.copyfileobj(src, out)
EOF
        mv "$ort_cache/$ORT_LIB.part" "$ort_cache/$ORT_LIB"
        rm -rf "$ort_tmp"
    fi
fi

# Next to every binary cargo builds (`pad` looks beside its executable), with
# the unversioned name the `ort` crate also tries.
if [ -f "$ort_cache/$ORT_LIB" ]; then
    for profile in debug release; do
        mkdir -p "$CARGO_TARGET_DIR/$profile"
        ln -sf "$ort_cache/$ORT_LIB" "$CARGO_TARGET_DIR/$profile/$ORT_LIB"
        ln -sf "$ORT_LIB" "$CARGO_TARGET_DIR/$profile/libonnxruntime.so"
    done
fi
