#!/bin/bash
# The awkward tables (gen_awkward.c) through the mount against a dump of the store: a Python walk, find,
# du, stat, ls, cat and getfattr; non-canonical names; then a remount (read-only) with the same inode
# numbers and directory times.
. "$(dirname "$0")/lib.sh"
"$GEN_AWKWARD" "$TMP/store" awkward || exit 1
mkdir "$TMP/dump"
"$DUMP_STORE" "$TMP/store" "$TMP/dump" || exit 1
mount_store "$TMP/store"
check tree "$TMP/dump" "$MNT" "$TMP/state"
unmount_store
mount_store "$TMP/store" -o ro
check remount "$TMP/dump" "$MNT" "$TMP/state"
unmount_store
exit $status
