#!/bin/bash
# 100k rows in one prefix directory (big/big) and 100k rows whose next segments are three (few/pre):
# listed once each, in key order, three at once, from any offset, and while cellctl changes the store,
# with the daemon's memory bounded; the few-segment prefix in a couple of requests.
. "$(dirname "$0")/lib.sh"
"$GEN_AWKWARD" "$TMP/store" big || exit 1
mkdir "$TMP/dump"
"$DUMP_STORE" "$TMP/store" "$TMP/dump" || exit 1
mount_store "$TMP/store"
check bigdir "$TMP/dump" "$MNT" "$DAEMON_PID" "$TMP/store"
unmount_store
exit $status
