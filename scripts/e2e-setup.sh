#!/usr/bin/env bash
# Installs what the end-to-end suite needs, idempotently, into the git-ignored .e2e/ folder:
#   Debian packages (chromium, libkrb5-dev, ripgrep) when missing, and code-server 4.100.3 from npm.
# The recipe and its pitfalls: shared reference vscode-e2e.md (§1-§3).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
E2E="$ROOT/.e2e"
CS_VERSION=4.100.3
export ONNXRUNTIME_NODE_INSTALL=skip

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "e2e-setup: missing Debian packages: ${missing[*]}; install them as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "e2e-setup: apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

CS_DIR="$E2E/code-server"
installed="$(node -p "try{require('$CS_DIR/node_modules/code-server/package.json').version}catch{''}" 2>/dev/null || true)"
if [ "$installed" != "$CS_VERSION" ]; then
  # @vscode/ripgrep 1.15.11 downloads from GitHub unless its cache already holds the asset: seed it with Debian's rg.
  RG_CACHE="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$RG_CACHE"
  tar czf "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  mkdir -p "$CS_DIR"
  printf '{ "name": "kimina-e2e-code-server", "version": "0.0.0", "private": true }\n' > "$CS_DIR/package.json"
  echo "e2e-setup: npm install code-server@$CS_VERSION into $CS_DIR (about 90 s on 2 cores)"
  nodedir=/usr; [ -f /usr/include/node/node.h ] || nodedir="$(dirname "$(dirname "$(command -v node)")")"
  (cd "$CS_DIR" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir="$nodedir" \
    npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" 2>&1 | grep -v 'Unknown env config' || true)
  installed="$(node -p "require('$CS_DIR/node_modules/code-server/package.json').version")"
  [ "$installed" = "$CS_VERSION" ] || { echo "e2e-setup: code-server install failed" >&2; exit 1; }
fi
echo "e2e-setup: ready (code-server $installed, $(chromium --version 2>/dev/null | head -1))"
