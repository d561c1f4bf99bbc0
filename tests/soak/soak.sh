#!/bin/bash
# soak.sh [-m MINUTES] [-w WORKERS] [-s SEED] [-b BUILD] — a long mixed run, not in CI (see README.md):
# mounts a fresh store, runs soak.py (shell writes through the mount, cellctl set/import, rm through the
# mount, cellctl deletes, reads through both, from WORKERS threads at once, each against its own model)
# for MINUTES, then compares the whole store and every file of the mount with the model, runs
# `cellctl verify`, and unmounts: the daemon must exit 0 having printed nothing.
set -u
minutes=5 workers=4 seed=$RANDOM build=build
while getopts m:w:s:b: o; do
	case $o in
	m) minutes=$OPTARG ;;
	w) workers=$OPTARG ;;
	s) seed=$OPTARG ;;
	b) build=$OPTARG ;;
	*) echo "usage: $0 [-m MINUTES] [-w WORKERS] [-s SEED] [-b BUILD]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-soak.XXXXXX")
# copies, so that a rebuild during a long run does not pull the binaries away
cp "${CELLCTL:-$build/tools/cellctl}" "$tmp/cellctl" && cp "${CELLFS:-$build/fs/cellfs}" "$tmp/cellfs" || exit 1
export CELLCTL=$tmp/cellctl
CELLFS=$tmp/cellfs
mnt=$tmp/mnt db=$tmp/store
mkdir "$mnt"
daemon=
cleanup() {
	if awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt"
	fi
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
status=0
"$CELLCTL" --db "$db" createtable s families=cf || exit 1
"$CELLFS" "$db" "$mnt" -f 2>"$tmp/daemon.err" &
daemon=$!
for _ in $(seq 500); do mountpoint -q "$mnt" && break; sleep 0.01; done
mountpoint -q "$mnt" || { echo "FAIL: cellfs did not mount: $(cat "$tmp/daemon.err")"; exit 1; }

echo "soak: $minutes min, $workers workers, seed $seed (repeat with -s $seed; the threads' interleaving differs)"
python3 "$here/soak.py" "$db" "$mnt" "$(awk -v m="$minutes" 'BEGIN { print m * 60 }')" "$seed" "$workers" || status=1
"$CELLCTL" --db "$db" verify || { echo "FAIL: cellctl verify"; status=1; }
"$CELLCTL" --db "$db" stats s | head -3
fusermount3 -u "$mnt" || { echo "FAIL: fusermount3 -u"; status=1; }
wait "$daemon"
rc=$?
daemon=
[ $rc -eq 0 ] || { echo "FAIL: the daemon exited $rc"; status=1; }
[ ! -s "$tmp/daemon.err" ] || { echo "FAIL: the daemon wrote: $(head -c 2000 "$tmp/daemon.err")"; status=1; }
[ $status -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit $status
