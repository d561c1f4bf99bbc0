# emulator.sh — a private Bigtable emulator for a test script; sourced, not run (lib.sh here, and
# tests/bigtable/lib.sh). CBT_EMULATOR overrides where the emulator is looked for.
#     emulator_start LOG   start it on a free loopback port (port 0, then read back the one it bound),
#                          export BIGTABLE_EMULATOR_HOST; returns 1 with the log printed if it did not start
#     emulator_stop        stop it (idempotent; the scripts' EXIT traps call it)
#     front_start DIR ...  tests/bigtable/tlsfront.py, the loopback TLS front, before it (front_stop)
emulator=${CBT_EMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}
emu_pid=

# poll_output PID CMD...: CMD's output once it has some (what a server started in the background printed
# when it is ready), polled every 0.1 s for up to 3 minutes while process PID lives; empty if none came.
poll_output() {
	local pid=$1 out
	shift
	for _ in $(seq 1800); do
		out=$("$@" 2>/dev/null)
		[ -n "$out" ] && { echo "$out"; return; }
		kill -0 "$pid" 2>/dev/null || return
		sleep 0.1
	done
}

emulator_start() {
	local log=$1 addr=
	"$emulator" -host 127.0.0.1 -port 0 >"$log" 2>&1 &
	emu_pid=$!
	addr=$(poll_output "$emu_pid" sed -n 's/^Cloud Bigtable emulator running on \(.*\)$/\1/p' "$log")
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

# front_python: prints a Python 3 that has grpc, jwt and cryptography ($PYTHON3 if set; else Debian's
# python3-grpcio, python3-jwt, python3-cryptography: /usr/bin/python3 first, as a python3 earlier on PATH
# may lack them), or returns 1.
front_python() {
	local py
	for py in ${PYTHON3:-} /usr/bin/python3 python3; do
		if "$py" -c 'import grpc, jwt, cryptography' 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	return 1
}

# front_start DIR [OPTION...]: tests/bigtable/tlsfront.py in front of the emulator ($BIGTABLE_EMULATOR_HOST,
# which stays set: unset it for the clients that go through the front), its CA, certificates and keys
# in DIR; sets front_addr (host:port) and adds the front to front_pids (front_stop stops them all).
# Returns 1 with its stderr printed if it did not start.
front_pids=()
front_start() {
	local dir=$1 py n
	shift
	py=$(front_python) || { echo "FAIL: no python3 with grpc, jwt and cryptography"; return 1; }
	mkdir -p "$dir"
	n=${#front_pids[@]}
	"$py" "$(dirname "${BASH_SOURCE[0]}")/../bigtable/tlsfront.py" "$BIGTABLE_EMULATOR_HOST" "$dir" "$@" \
		>"$dir/addr.$n" 2>"$dir/err.$n" &
	front_pids+=($!)
	front_addr=$(poll_output "${front_pids[$n]}" head -1 "$dir/addr.$n")
	if [ -z "$front_addr" ]; then
		echo "FAIL: the TLS front did not start:"
		cat "$dir/err.$n"
		return 1
	fi
}

front_stop() {
	local p
	for p in "${front_pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	front_pids=()
}
