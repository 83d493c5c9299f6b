# Sourced by the online pre-check examples: start_server PROBE OUT_DIR starts `probe run_ut --online` on a free
# loopback port (port 0) for one producer, writing into OUT_DIR/online, and sets $server (its pid, killed on
# exit) and $port (read from its "listening on" line). Exits the script when the server dies or never listens.
start_server() {
  # The log exists before the server's shell opens it: under load the first sed could otherwise run first,
  # fail on the missing file and end the script (set -e).
  : >"$2/server.log"
  "$1" run_ut --online --host 127.0.0.1 --port 0 --producers 1 -o "$2/online" >"$2/server.log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' EXIT
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$2/server.log")
    [ -n "$port" ] && return 0
    kill -0 "$server" 2>/dev/null || { cat "$2/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "the server did not start listening" >&2
  exit 1
}
