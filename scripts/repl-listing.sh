#!/usr/bin/env bash
# Writes the dated listing of leanprover-community/repl's refs and lean-toolchain files that the Lean setup
# tests rebuild as a local git repository (test/lean/replFixture.ts). Usage:
#   scripts/repl-listing.sh /path/to/a/clone/of/repl > test/lean/data/repl-refs.txt
# Every commit reachable from a branch or tag, oldest first: `commit SHA DATE PARENTS TOOLCHAIN`
# (PARENTS comma-separated, `-` for none; TOOLCHAIN the first line of lean-toolchain, `-` when absent),
# then `tag NAME SHA` and `branch NAME SHA` lines. Dates are author dates (ISO 8601).
set -euo pipefail
repo=${1:?usage: repl-listing.sh REPL_CLONE}
cd "$repo"
head=$(git rev-parse master)
echo "# leanprover-community/repl: branches, tags and lean-toolchain of every commit they reach."
echo "# source: https://github.com/leanprover-community/repl, master at $head ($(git log -1 --format=%ad --date=iso-strict master))"
echo "# written $(date -u +%Y-%m-%dT%H:%MZ) by scripts/repl-listing.sh from a snapshot of that repository."
echo "# flush fix: 4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4 (avoid buffering stdout, #49)"
git rev-list --branches --tags --reverse --topo-order --format='%H %ad %P' --date=iso-strict | grep -v '^commit ' |
  while read -r sha date parents; do
    tc=$(git show "$sha:lean-toolchain" 2>/dev/null | head -n1 | tr -d ' \r' || true)
    p=$(echo "$parents" | tr ' ' ',')
    echo "commit $sha $date ${p:--} ${tc:--}"
  done
git for-each-ref --format='tag %(refname:short) %(objectname)' refs/tags --sort=version:refname |
  while read -r kind name obj; do echo "tag $name $(git rev-parse "$obj^{commit}")"; done
git for-each-ref --format='branch %(refname:short) %(objectname)' refs/heads
