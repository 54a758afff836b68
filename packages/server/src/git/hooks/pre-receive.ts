import { PUSH_REFUSALS } from "../push-rights.js";

/** A refusal text with the hook's own shell variables in place of the ref and number. */
const say = (refusal: (ref: string, num: string) => string) => refusal("$ref", "$num");

/**
 * git's pre-receive hook for every push (https://git-scm.com/docs/githooks#pre-receive),
 * as a POSIX shell script: it runs once per push, inside receive-pack, with the
 * pushed objects still in quarantine, and a script starts far faster than Node.
 * It refuses the whole push, with a message git prints to the user, when a ref
 * is not a branch, tag or pull request the pusher may update, or when a file
 * over the size limit is not in Git LFS. What the pusher may update comes from
 * the environment the hub gives receive-pack (`pushHookEnvironment`), never from
 * text in the script: HUB_PUSH_BRANCHES (1 for the repository's writers) and
 * HUB_PUSH_PULL_REQUESTS (the open pull requests they may push to), and for the
 * messages the pull requests that are someone else's, merged or closed. Unset
 * variables allow nothing. git's receive.denyNonFastForwards (the repository's
 * denyForcePush) guards only branches, so the hook applies it to pull requests. Sizes come from the quarantined objects of the push
 * alone, so history is never walked on the way in; paths are looked up only on
 * refusal.
 */
export const PRE_RECEIVE_HOOK = `#!/bin/sh
# Written by the hub at start-up; edits are overwritten.
limit="\${HUB_MAX_GIT_BLOB_BYTES:-10485760}"
mib() { awk -v bytes="$1" 'BEGIN { printf "%.1f MiB", bytes / 1048576 }'; }
problems=""
add() { problems="$problems  - $1
"; }
# Whether a number is in a list of numbers separated by spaces.
listed() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
# Whether moving a ref from $1 to $2 rewrites history the repository protects (denyForcePush).
rewrites() {
  case "$1" in *[!0]*) ;; *) return 1 ;; esac
  [ "$(git config --bool receive.denyNonFastForwards)" = true ] || return 1
  ! git merge-base --is-ancestor "$1" "$2"
}
updates=$(cat)
newest=""
while read -r old new ref; do
  case "$ref" in
    refs/pr/*)
      num="\${ref#refs/pr/}"
      case "$num" in
        ""|0*|*[!0-9]*) add "${PUSH_REFUSALS.notPullRequestRef("$ref")}" ;;
        *)
          case "$new" in
            *[!0]*)
              if listed "$num" "$HUB_PUSH_PULL_REQUESTS"; then
                if rewrites "$old" "$new"; then add "${PUSH_REFUSALS.rewrite("$ref")}"
                else newest="$newest $new:$ref"
                fi
              elif listed "$num" "$HUB_PULL_REQUESTS_MERGED"; then add "${say(PUSH_REFUSALS.merged)}"
              elif listed "$num" "$HUB_PULL_REQUESTS_CLOSED"; then add "${say(PUSH_REFUSALS.closed)}"
              elif listed "$num" "$HUB_PULL_REQUESTS_NOT_YOURS"; then add "${say(PUSH_REFUSALS.notYours)}"
              else add "${say(PUSH_REFUSALS.unknown)}"
              fi ;;
            *) add "${say(PUSH_REFUSALS.deletePullRequest)}" ;;
          esac ;;
      esac ;;
    refs/heads/-*) add "$ref: names may not start with \\"-\\"; rename the branch." ;;
    refs/tags/-*) add "$ref: names may not start with \\"-\\"; rename the tag." ;;
    refs/heads/?*|refs/tags/?*)
      if [ "\${HUB_PUSH_BRANCHES:-0}" != 1 ]; then add "${PUSH_REFUSALS.writersOnly("$ref")}"
      else
        case "$new" in *[!0]*) newest="$newest $new:$ref" ;; esac
      fi ;;
    *) add "$ref: only branches (refs/heads/*), tags (refs/tags/*) and pull requests (refs/pr/<number>) can be pushed." ;;
  esac
done <<UPDATES
$updates
UPDATES
if [ -n "$newest" ]; then
  # The pushed objects sit alone in the quarantine directory (git 2.11 and newer): list their sizes
  # from there, without walking history.
  if [ -z "$GIT_QUARANTINE_PATH" ]; then
    echo "The hub needs git 2.38 or newer on the server (this git gives pushes no quarantine to check)." >&2
    exit 1
  fi
  # Sizes alone (timed on a push of 46k objects: 35 ms, against about 50 with their types); the few objects
  # over the limit have their type asked one by one. A pipeline's status is its last command's, so a failure
  # of git cat-file reaches awk as a line that says so: a push is never taken unchecked.
  oversized=$({ GIT_ALTERNATE_OBJECT_DIRECTORIES= git cat-file --batch-all-objects --batch-check='%(objectsize) %(objectname)' || echo failed; } |
    awk -v limit="$limit" '$1 == "failed" { failed = 1; next } $1 > limit { print $2 } END { exit failed }') || {
    echo "The hub could not list the sizes of the pushed objects, so nothing was updated; push again." >&2
    exit 1
  }
  for blob in $oversized; do
    [ "$(git cat-file -t "$blob")" = blob ] || continue
    size=$(git cat-file -s "$blob")
    named=""
    for update in $newest; do
      path=$(git rev-list --objects "\${update%%:*}" --not --all | grep "^$blob " | head -n 1 | cut -d ' ' -f 2-)
      if [ -n "$path" ]; then
        add "$path is $(mib "$size") (ref \${update#*:}); files over $(mib "$limit") must be stored with Git LFS: run git lfs track \\"$path\\", then git add and commit it again."
        named=1
        break
      fi
    done
    # Every oversized object is refused, even one no path names (a tag pointing at a blob, an unreferenced object).
    [ -n "$named" ] || add "object $blob is $(mib "$size"); objects over $(mib "$limit") must be stored with Git LFS."
  done
fi
if [ -n "$problems" ]; then
  printf 'Your push was rejected:\\n%s' "$problems" >&2
  exit 1
fi
exit 0
`;
