# procs.sh — finding a mount and its daemon by the mountpoint $MNT (sourced by lib.sh here and by
# tests/package/package.sh, whose daemons mount(8) starts, so they are nobody's children).

# Whether MNT is mounted (by /proc/mounts: a mount whose daemon died fails mountpoint's stat).
is_mounted() {
	awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

# The pids of cellfs processes serving MNT (named cellfs, with MNT, unique to this run, as an argument).
daemon_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = cellfs ] || continue
		tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$MNT" && echo "${p#/proc/}"
	done
}
