#!/usr/bin/env bash
# Installs (apt-get) only what is missing. Idempotent; needs root on a fresh Debian 12.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format-14 lld
      libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev libssl-dev openssl libyaml-cpp-dev
      libgtest-dev libgmock-dev libbenchmark-dev libnghttp2-dev nghttp2-client
      libprotobuf-dev protobuf-compiler libsnappy-dev
      nginx-light nodejs npm python3 python3-jsonschema python3-lxml python3-yaml wrk iproute2 procps util-linux
      chromium fonts-dejavu-core prometheus)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodesource-style installs ship npm inside nodejs; do not fight them.
if ((${#missing[@]})) && command -v npm >/dev/null; then
  missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if ((${#missing[@]} == 0)); then exit 0; fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root or install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
