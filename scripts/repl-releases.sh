#!/usr/bin/env bash
# The expected resolution table for the Lean setup tests (test/lean/data/repl-releases.txt), computed with plain
# git on a real clone of leanprover-community/repl, independently of backend/lean/replRevision.ts. Usage:
#   scripts/repl-releases.sh REPL_CLONE test/lean/data/repl-refs.txt   (prints one line per release)
set -euo pipefail
cd "${1:?usage: repl-releases.sh REPL_CLONE LISTING}"
listing=$(realpath -m "$2" 2>/dev/null || echo "$2")
tc() { git show "$1:lean-toolchain" 2>/dev/null | head -1 | sed 's/.*://' | tr -d ' \r'; }
rels=$( (awk '$1=="commit"{print $NF}' "$OLDPWD/$2" | sed 's/.*://' | grep -E '^v4\.'; echo v4.12.0; echo v4.13.0) |
  sort -uV | awk -F'[.-]' '{ if ($2+0 >= 9) print }')
mapfile -t changes < <(git log --first-parent --format=%H master -- lean-toolchain)
for R in $(echo "$rels" | sort -V); do
  res=""
  if git rev-parse -q --verify "refs/tags/$R^{commit}" >/dev/null && [ "$(tc "refs/tags/$R")" = "$R" ]; then res="tag $R $(git rev-parse "$R^{commit}")"; fi
  if [ -z "$res" ]; then for b in "bump_to_$R" "bump_toolchain_to_$R" "bump/$R" "releases/$R"; do
    if git rev-parse -q --verify "refs/heads/$b" >/dev/null && [ "$(tc "$b")" = "$R" ]; then res="branch $b $(git rev-parse "$b")"; break; fi
  done; fi
  if [ -z "$res" ]; then for i in "${!changes[@]}"; do
    if [ "$(tc "${changes[$i]}")" = "$R" ]; then
      if [ "$i" = 0 ]; then rev=master; else rev="${changes[$((i - 1))]}^1"; fi
      res="master master $(git rev-parse "$rev")"; break
    fi
  done; fi
  if [ -z "$res" ]; then for c in $(git log --branches --format=%H -- lean-toolchain); do
    if [ "$(tc "$c")" = "$R" ]; then res="history ${c:0:12} $c"; break; fi
  done; fi
  [ -n "$res" ] || res="none - -"
  set -- $res
  if [ "$3" = "-" ]; then fx=-; elif git merge-base --is-ancestor 4fc1e6d "$3"; then fx=has; else fx=apply; fi
  echo "$R $res $fx"
done
