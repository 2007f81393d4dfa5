#!/usr/bin/env bash
# The Python half of the test suite: the bindings' tests and the notebooks, in a virtual
# environment kept in the repository (.venv, gitignored; created when missing).
#   python/test.sh          set up and build, then test
#   python/test.sh build    only create the environment and build the extension into it
#   python/test.sh check    only test (the extension already built)
# The root's test.sh runs `build` beside `cargo test` and `check` after it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
VENV="$PWD/.venv"

if [ "$mode" != check ]; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    # uv installs the packages (pip took a minute)
    [ -x "$VENV/bin/uv" ] || "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv
    "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" \
        maturin pytest nbclient nbconvert ipykernel matplotlib numpy "dask[distributed]" "mujoco[sysid]==4.0.0"
    # the extension, with the fast-compiling `python` profile (no fat LTO), installed into .venv;
    # its own target directory, so that it builds while `cargo test` holds the workspace's
    (cd python && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" CARGO_TARGET_DIR="$PWD/../target/python-ext" \
        maturin develop --profile python)
fi
[ "$mode" = build ] && exit 0

"$VENV/bin/python" -m pytest -q python/tests

# every notebook top to bottom, two at a time (a cell error fails); the committed outputs are
# left untouched
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
notebook() {
    local nb="$1" start=$SECONDS
    if (cd notebooks && MPLBACKEND=Agg "$VENV/bin/jupyter" nbconvert --to notebook --execute \
        --ExecutePreprocessor.timeout=600 --output-dir "$out" \
        "$(basename "$nb")" >"$out/$(basename "$nb").log" 2>&1); then
        echo "notebook ok: $nb ($((SECONDS - start)) s)"
    else
        echo "notebook failed: $nb"
        tail -30 "$out/$(basename "$nb").log"
        return 1
    fi
}
export -f notebook
export VENV out
shopt -s nullglob
nbs=(notebooks/*.ipynb)
[ ${#nbs[@]} -eq 0 ] || printf '%s\n' "${nbs[@]}" | xargs -P 2 -I{} bash -c 'notebook "$1"' _ {}
