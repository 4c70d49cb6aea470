#!/usr/bin/env bash
# GPU decode check (issue 32), prepared and UNRUN: no GPU was lent to the session that wrote it.
# On a machine with an NVIDIA GPU, from a checkout with node_modules (ONNXRUNTIME_NODE_INSTALL=skip npm ci):
#   bash scripts/gpu-decode-check.sh [OUT_DIR]
# installs the comparators if missing (bash bench/decode-setup: node-llama-cpp 3.21.1 with its prebuilt CUDA
# and Vulkan binaries), then runs bench/gpuDecode.ts: llama.cpp through node-llama-cpp on CUDA and on Vulkan
# (one row at 32 / 4,096 / 12,288 cached, flash attention off and on; 1 / 2 / 4 / 8 rows at 4,096), vLLM beside
# it when KIMINA_VLLM_PYTHON (or test/trainer/.venv) has vllm, and the expected time to the first verified
# proof from each measured step cost. The report goes to OUT_DIR/gpu-decode.md (default .kimina-cache/gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.kimina-cache/gpu}
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed: no NVIDIA driver?" >&2
(command -v vulkaninfo > /dev/null && vulkaninfo --summary > "$out/vulkaninfo.txt" 2>&1) || true
[ -f .kimina-cache/bench/deps/node_modules/node-llama-cpp/package.json ] || bash bench/decode-setup
node --import tsx bench/gpuDecode.ts > "$out/gpu-decode.md" 2> "$out/gpu-decode.log"
cat "$out/gpu-decode.md"
