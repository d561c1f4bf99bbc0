# emulator.sh — a private Bigtable emulator for a test script; sourced, not run (lib.sh here, and
# tests/bigtable/lib.sh). CBT_EMULATOR overrides where the emulator is looked for.
#     emulator_start LOG   start it on a free loopback port (port 0, then read back the one it bound),
#                          export BIGTABLE_EMULATOR_HOST; returns 1 with the log printed if it did not start
#     emulator_stop        stop it (idempotent; the scripts' EXIT traps call it)
emulator=${CBT_EMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}
emu_pid=

emulator_start() {
	local log=$1 addr=
	"$emulator" -host 127.0.0.1 -port 0 >"$log" 2>&1 &
	emu_pid=$!
	for _ in $(seq 1200); do
		addr=$(sed -n 's/^Cloud Bigtable emulator running on \(.*\)$/\1/p' "$log")
		[ -n "$addr" ] && break
		kill -0 "$emu_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$addr" ]; then
		echo "FAIL: the emulator did not start:"
		cat "$log"
		return 1
	fi
	export BIGTABLE_EMULATOR_HOST=$addr
}

emulator_stop() {
	if [ -n "$emu_pid" ]; then
		kill "$emu_pid" 2>/dev/null
		wait "$emu_pid" 2>/dev/null
		emu_pid=
	fi
}
