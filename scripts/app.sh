# Sourced by scripts/setup.sh: what the desktop app needs to build — the
# system libraries Tauri links (WebKitGTK 4.1, GTK 3, the appindicator tray,
# librsvg, libxdo) and the UI's npm packages — and the UI itself, built into
# ui/dist, which the app embeds. Quiet and quick when all is in place.

app_apt=()
pkg-config --exists webkit2gtk-4.1 2>/dev/null || app_apt+=(libwebkit2gtk-4.1-dev)
pkg-config --exists gtk+-3.0 2>/dev/null || app_apt+=(libgtk-3-dev)
pkg-config --exists ayatana-appindicator3-0.1 2>/dev/null || app_apt+=(libayatana-appindicator3-dev)
pkg-config --exists librsvg-2.0 2>/dev/null || app_apt+=(librsvg2-dev)
[ -f /usr/include/xdo.h ] || app_apt+=(libxdo-dev)
pkg-config --exists openssl 2>/dev/null || app_apt+=(libssl-dev)
command -v file >/dev/null 2>&1 || app_apt+=(file)
command -v npm >/dev/null 2>&1 || app_apt+=(nodejs npm)
if [ ${#app_apt[@]} -gt 0 ]; then
    echo "setup: installing ${app_apt[*]} (for the desktop app)" >&2
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${app_apt[@]}"
fi

# The UI's packages, from the lock file; again only when the lock changed.
ui_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../ui" && pwd)"
if ! cmp -s "$ui_dir/package-lock.json" "$ui_dir/node_modules/.package-lock.stamp" 2>/dev/null; then
    echo "setup: installing the UI's npm packages" >&2
    # `npm install` from the lock (npm 11's `npm ci` refuses lock files that,
    # like this one, leave out other platforms' optional packages).
    (cd "$ui_dir" && npm install --no-audit --no-fund --loglevel=error)
    cp "$ui_dir/package-lock.json" "$ui_dir/node_modules/.package-lock.stamp"
fi
# The pages the app embeds (tauri.conf.json: frontendDist = ../ui/dist),
# rebuilt only when their sources changed: a rebuilt dist/ makes cargo
# rebuild the app crate too.
ui_hash="$(cd "$ui_dir" && find src index.html quick.html package-lock.json vite.config.ts tsconfig.json \
    -type f ! -name '*.test.ts' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$ui_dir/dist/.sources.sha256" 2>/dev/null)" != "$ui_hash" ]; then
    if ! ui_out="$(cd "$ui_dir" && npm run --silent build 2>&1)"; then
        echo "$ui_out" >&2
        echo "setup: building the UI (ui/, npm run build) failed" >&2
        exit 1
    fi
    echo "$ui_hash" >"$ui_dir/dist/.sources.sha256"
fi
