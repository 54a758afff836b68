/**
 * git's pre-receive hook for every push (https://git-scm.com/docs/githooks#pre-receive),
 * as a POSIX shell script: it runs once per push, inside receive-pack, with the
 * pushed objects still in quarantine, and a script starts far faster than Node.
 * It refuses the whole push, with a message git prints to the user, when a ref
 * is not a branch or tag, or when a file over the size limit is not in Git LFS.
 * Oversized blobs are found by git itself (`--filter=blob:limit`), so a large
 * push is never listed object by object; paths are looked up only on refusal.
 */
export const PRE_RECEIVE_HOOK = `#!/bin/sh
# Written by the hub at start-up; edits are overwritten.
limit="\${HUB_MAX_GIT_BLOB_BYTES:-10485760}"
mib() { awk -v bytes="$1" 'BEGIN { printf "%.1f MiB", bytes / 1048576 }'; }
problems=""
add() { problems="$problems  - $1
"; }
while read -r old new ref; do
  case "$ref" in
    refs/pr/*) add "$ref: refs/pr/* belong to pull requests; push a branch and open a pull request instead."; continue ;;
    refs/heads/-*) add "$ref: names may not start with \\"-\\"; rename the branch."; continue ;;
    refs/tags/-*) add "$ref: names may not start with \\"-\\"; rename the tag."; continue ;;
    refs/heads/?*|refs/tags/?*) ;;
    *) add "$ref: only branches (refs/heads/*) and tags (refs/tags/*) can be pushed."; continue ;;
  esac
  case "$new" in *[!0]*) ;; *) continue ;; esac
  oversized=$(git rev-list --objects --filter=blob:limit=$((limit + 1)) --filter-print-omitted "$new" --not --all | sed -n 's/^~//p') || exit 1
  for blob in $oversized; do
    size=$(git cat-file -s "$blob")
    path=$(git rev-list --objects "$new" --not --all | grep "^$blob " | head -n 1 | cut -d ' ' -f 2-)
    add "$path is $(mib "$size") (ref $ref); files over $(mib "$limit") must be stored with Git LFS: run git lfs track \\"$path\\", then git add and commit it again."
  done
done
if [ -n "$problems" ]; then
  printf 'Your push was rejected:\\n%s' "$problems" >&2
  exit 1
fi
exit 0
`;
