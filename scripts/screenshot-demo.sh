#!/usr/bin/env bash
# Re-makes docs/demo.png, the picture of `punctual demo` that the README shows.
#
# Usage: scripts/screenshot-demo.sh [PUNCTUAL [OUT]]
#   PUNCTUAL  the binary to run (default build/punctual); this script builds nothing
#   OUT       where the PNG goes (default docs/demo.png)
# Environment (optional): WIDTH=1200 (px); HEIGHT (px, default: the page's own height, measured
# by chromium, or 1100 if that fails); CHROMIUM (default: chromium, chromium-browser or google-chrome).
#
# It runs `punctual demo` (about 20 s: a stalling server on 127.0.0.1 measured three ways) in a
# temp dir, opens the demo.html it wrote in headless chromium from file:// and screenshots it.
# Nothing leaves the machine: the page loads no resource, and chromium resolves no host name.
# The temp dir is removed on exit. It refuses to write OUT when the demo itself failed (exit 1:
# the open run missed the truth, e.g. on a busy machine), since the page would then show that.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
punctual=${1:-$repo/build/punctual}
out=${2:-$repo/docs/demo.png}
width=${WIDTH:-1200}

die() { echo "screenshot-demo: $*" >&2; exit 1; }

[[ -x $punctual ]] || die "no punctual binary at $punctual (build it first, e.g. make build)"
punctual=$(cd "$(dirname "$punctual")" && pwd)/$(basename "$punctual")
chromium=${CHROMIUM:-}
if [[ -z $chromium ]]; then
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then chromium=$(command -v "$c"); break; fi
  done
fi
[[ -n $chromium ]] || die "chromium is not installed (Debian: apt-get install chromium)"
[[ -d $(dirname "$out") ]] || die "no directory for $out"

tmp=$(mktemp -d /tmp/punctual-screenshot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

browser() {  # browser ARGS...: headless chromium with a fresh profile, output in $tmp
  rm -rf "$tmp/profile"
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --no-proxy-server '--host-resolver-rules=MAP * ~NOTFOUND' \
    --hide-scrollbars --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chromium.log"
}

echo "running punctual demo in $tmp (about 20 s)" >&2
rc=0
(cd "$tmp" && timeout 120 "$punctual" demo --json "$tmp/demo.json" --html "$tmp/demo.html") \
  >"$tmp/demo.out" 2>&1 || rc=$?
if [[ $rc != 0 || ! -s $tmp/demo.html ]]; then
  cat "$tmp/demo.out" >&2
  die "punctual demo exited $rc; not writing $out"
fi

# The page's own height at this width, so the picture holds the table and the chart and little
# else: a copy of the page with a script that writes its height into the DOM.
height=${HEIGHT:-}
if [[ -z $height ]]; then
  sed 's|</body>|<script>document.body.setAttribute("data-height", Math.ceil(document.body.getBoundingClientRect().bottom + parseFloat(getComputedStyle(document.body).marginBottom)));</script></body>|' \
    "$tmp/demo.html" >"$tmp/measure.html"
  height=$(browser --window-size="$width,800" --dump-dom "file://$tmp/measure.html" |
             sed -n 's/.*data-height="\([0-9]*\)".*/\1/p' | head -n 1) || true
  if ! [[ $height =~ ^[0-9]+$ ]] || (( height < 200 || height > 5000 )); then height=1100; fi
fi

browser --window-size="$width,$height" --screenshot="$tmp/demo.png" "file://$tmp/demo.html" \
  >/dev/null || { cat "$tmp/chromium.log" >&2; die "chromium failed"; }
magic=$(head -c 8 "$tmp/demo.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
if [[ $magic != 89504e470d0a1a0a ]]; then
  cat "$tmp/chromium.log" >&2
  die "chromium wrote no PNG"
fi
cp "$tmp/demo.png" "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "wrote $out (${width}x${height}, $(stat -c %s "$out") bytes)"
