/**
 * git's post-receive hook (https://git-scm.com/docs/githooks#post-receive): it
 * runs after a push has updated its refs and gets one `old new ref` line per
 * updated ref. It copies them to the file the hub named for this push in
 * HUB_PUSH_RECORD, which the hub reads when git exits to report the push.
 */
export const POST_RECEIVE_HOOK = `#!/bin/sh
# Written by the hub at start-up; edits are overwritten.
if [ -n "$HUB_PUSH_RECORD" ]; then
  cat > "$HUB_PUSH_RECORD"
fi
exit 0
`;
