#!/usr/bin/env bash
# The expected resolution table for the Lean setup tests (test/lean/data/repl-releases.txt), computed with plain
# git on a real clone of leanprover-community/repl, independently of backend/lean/replRevision.ts. Usage:
#   scripts/repl-releases.sh REPL_CLONE test/lean/data/repl-refs.txt [RELEASE…]   (prints one line per release)
# RELEASE…: releases repl never named (v4.29.1, v4.32.2, one newer than the snapshot) to list as well.
# A release with no revision gets `nearest OLDER COMMIT`: the newest older release on master's first-parent
# lean-toolchain changes and the newest master commit still on it, the source setup builds with the project's
# own toolchain.
set -euo pipefail
cd "${1:?usage: repl-releases.sh REPL_CLONE LISTING}"
listing=$(realpath -m "$2" 2>/dev/null || echo "$2")
tc() { git show "$1:lean-toolchain" 2>/dev/null | head -1 | sed 's/.*://' | tr -d ' \r'; }
extra=("${@:3}")
rels=$( (awk '$1=="commit"{print $NF}' "$OLDPWD/$2" | sed 's/.*://' | grep -E '^v4\.'; echo v4.12.0; echo v4.13.0
  for e in "${extra[@]}"; do echo "$e"; done) |
  sort -uV | awk -F'[.-]' '{ if ($2+0 >= 9) print }')
mapfile -t changes < <(git log --first-parent --format=%H master -- lean-toolchain)
# A sortable key of a release tag, as backend/lean/toolchain.ts compareReleaseTags orders them: -m < -rc < release.
key() { echo "$1" | sed -E 's/^v([0-9]+)\.([0-9]+)\.([0-9]+)(-(rc|m)([0-9]+))?$/\1 \2 \3 \5 \6/' |
  awk '{ pre = ($4 == "") ? 2 : (($4 == "m") ? 0 : 1); printf "%05d%05d%05d%d%05d\n", $1, $2, $3, pre, $5 }'; }
nearest() {
  local best="" bestkey="" i t k
  for i in "${!changes[@]}"; do
    t=$(tc "${changes[$i]}")
    echo "$t" | grep -qE '^v[0-9]+\.[0-9]+\.[0-9]+(-(rc|m)[0-9]+)?$' || continue
    k=$(key "$t")
    if [[ "$k" < "$(key "$1")" ]] && [[ -z "$bestkey" || "$k" > "$bestkey" ]]; then best=$i; bestkey=$k; fi
  done
  [ -n "$best" ] || return 0
  t=$(tc "${changes[$best]}")
  if [ "$best" = 0 ]; then rev=master; else rev="${changes[$((best - 1))]}^1"; fi
  if [ "$(tc "$rev")" = "$t" ]; then echo "nearest $t $(git rev-parse "$rev")"; else echo "nearest $t ${changes[$best]}"; fi
}
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
  [ -n "$res" ] || res=$(nearest "$R")
  [ -n "$res" ] || res="none - -"
  set -- $res
  if [ "$3" = "-" ]; then fx=-; elif git merge-base --is-ancestor 4fc1e6d "$3"; then fx=has; else fx=apply; fi
  echo "$R $res $fx"
done
