#!/usr/bin/env bash
# A lecture hall: N `streamlit run app.py` processes behind HAProxy, with cookie affinity.
#
#   deploy/serve.sh N [PORT]            start N processes and HAProxy on PORT (default 8501)
#   deploy/serve.sh --config N [PORT]   print the HAProxy configuration it would use, and exit
#
# One Streamlit server is one Python process on about one core. This starts N of them on
# 127.0.0.1, ports PORT+1 .. PORT+N, waits until each answers /_stcore/health from its own
# process, writes an HAProxy configuration (checked with `haproxy -c`) and runs HAProxy in the
# foreground on PORT, by default on 127.0.0.1 only (XATTN_BIND=0.0.0.0 opens it to the
# network). A student's first request gets a cookie (XATTN_SERVER) naming one process; the
# page's websocket, its downloads (/media/...) and uploads carry the cookie back to the process
# that holds the session. Ctrl-C, SIGTERM or SIGHUP stops HAProxy and every Streamlit process
# (a second one skips their 15 s to finish); so does the exit of HAProxy or a clean stop of any
# process. A Streamlit process that crashes (non-zero status, killed) is restarted, at most
# XATTN_MAX_RESTARTS times in all; meanwhile its phones reconnect to another process (option
# redispatch), which sends them the room as it is and takes their answers (a tap not yet saved
# is kept on the phone and sent again), and a lecturer's page reruns at once in a new session
# there (xattn/ui/internals/reconnect.py).
#
# The processes run in sessions of their own: a Ctrl-C in the terminal reaches this script
# only, which stops them in order. (In one process group each Streamlit process also got the
# SIGINT and exited 0, and HAProxy too; when this script could not trap SIGINT, having started
# with it ignored, the first of them to end decided the exit status: 0 or 1, never 130.)
#
# Exit status: 130 after Ctrl-C (SIGINT), 143 after SIGTERM, 129 after SIGHUP, whichever
# process stops first; 0 after a clean stop of one process; 1 on a failure (its logs' last
# lines are printed); 2 on bad arguments; 3 when a port is in use by another program. The
# run directory (configuration, and the logs unless XATTN_LOG_DIR names a folder for them) is
# removed on every exit unless XATTN_RUN_DIR names it. Nothing else is written: on a read-only
# root only TMPDIR (or /tmp), XATTN_RUN_DIR and XATTN_LOG_DIR need to be writable.
#
# Needs Linux (/proc), bash 5.1+, setsid (util-linux), Python with the requirements installed,
# and HAProxy 2.4+ (Debian: apt-get install -y haproxy; it need not run as a service: stop that
# one if it holds PORT).
#
# Environment (all optional):
#   XATTN_AFFINITY=0          no cookie: every request goes to the next process. Only to show
#                             what breaks without affinity (downloads, reconnects); never teach so.
#   XATTN_BIND=127.0.0.1      address HAProxy listens on; 0.0.0.0 for every network interface
#                             (students on other machines), or one interface's address
#   XATTN_BACKEND_PORT        first Streamlit port (default PORT+1)
#   XATTN_MAXCONN=6000        connections HAProxy accepts at once (each phone holds one
#                             stream of its room plus short requests); more wait in the kernel
#   XATTN_SERVER_MAXCONN=3000 connections per Streamlit process; more wait in HAProxy's queue
#   XATTN_CONN_PER_ADDRESS=2500  connections without a class's cookie one client address may
#                             hold (a campus NAT's whole hall is one address: 1,000 phones
#                             loading their page fit); those with one: each process checks them
#   XATTN_WS_PER_ADDRESS=200  Streamlit websockets without a class's cookie one address may
#                             hold, and open in 10 s (the lecturer's pages, students on the
#                             full page carry one and are not counted here; phones use none)
#   XATTN_RUN_DIR             where the configuration and logs go, kept after the exit
#                             (default: a new directory in $TMPDIR or /tmp, removed on exit)
#   XATTN_LOG_DIR             where the logs go instead (s1.log .. sN.log, haproxy.log),
#                             kept after every exit, appended to by the next start
#   XATTN_LOG_MAX_KB=20000    a log past this size is copied to NAME.log.1 (older copies
#   XATTN_LOG_KEEP=3          shifted to .2 .. .KEEP, the oldest dropped) and emptied in
#                             place, checked every 5 s: a log folder holds at most about
#                             (KEEP + 1) x MAX_KB per log
#   XATTN_START_TIMEOUT=120   seconds to wait for the processes to become healthy
#   XATTN_MAX_RESTARTS=5      restarts of dead Streamlit processes before giving up
#   XATTN_STREAMLIT_ARGS      extra arguments for every `streamlit run`, e.g.
#                             "--server.enableWebsocketCompression true"
#   XATTN_START_REDIS=DIR     start a redis-server of this hall's own with persistence (an
#                             append-only file in DIR, fsync every second) on a unix socket in
#                             DIR, and give its address to every process (XATTN_REDIS_URL): a
#                             Redis that restarts keeps every class (docs/deploy.md); one that
#                             crashes is restarted on its file; stopped last, after the processes
#   REDIS_SERVER              redis-server (default: on PATH, else /usr/bin/redis-server)
#   PYTHON                    the Python that has the requirements (default: the active venv's,
#                             $VIRTUAL_ENV/bin/python, else python3 on PATH); checked before
#                             anything starts: one line says when it lacks streamlit
#   HAPROXY                   HAProxy (default: haproxy on PATH, else /usr/sbin/haproxy)
set -euo pipefail
if (( BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1) )); then
  echo "serve.sh: needs bash 5.1 or later (wait -n -p), this is $BASH_VERSION" >&2
  exit 1
fi
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The Python it was started with: PYTHON, else the active venv's (a venv's bin/ may not be on
# PATH when its python is called by its path), else python3 on PATH
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
    PYTHON="$VIRTUAL_ENV/bin/python"
  else
    PYTHON=python3
  fi
fi
export PYTHON
# Debian installs haproxy in /usr/sbin, which a normal user's PATH lacks
HAPROXY="${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"

usage() {
  sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

say() { printf 'xattn: %s\n' "$*"; }

# --- configuration ----------------------------------------------------------------------------

haproxy_config() {  # N PORT BACKEND_PORT: the configuration on stdout
  local n=$1 port=$2 first=$3 affinity="${XATTN_AFFINITY:-1}" i
  cat <<EOF
# HAProxy in front of $n \`streamlit run app.py\` processes: deploy/serve.sh --config $n $port
# Cookie affinity: a session's websocket, downloads (/media/...) and uploads must reach the
# process that holds it. Source-IP affinity would send a classroom behind one NAT to one process.
global
    maxconn $(( ${XATTN_MAXCONN:-6000} + 100 ))
    # A request's line and headers must fit in one buffer (default 16 kB, else HTTP 400), and
    # the page's link holds every control: up to about 70 kB (two sentences of 2,000 characters
    # of 4 bytes each, percent-encoded, plus the masked tokens). A buffer is taken while data
    # moves, not for every open websocket.
    tune.bufsize 98304
    log stdout format raw local0 info

defaults
    mode http
    log global
    # option httplog's fields with the request's path alone (txn.logged_path, set in the
    # frontend) for its request line: a lecturer's link carries the room's host key in its query
    # (?room=...&host=KEY) and a student's the sentences they typed; neither belongs in a log
    log-format "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq \"%HM %[var(txn.logged_path)] %HV\""
    option dontlognull
    option forwardfor
    # a request carrying the cookie of a process that is down goes to another one
    option redispatch
    # a server-sent event goes out at once: without it HAProxy let the kernel hold each
    # streamed frame up to 200 ms waiting for more (measured: 150-356 ms per move, 6-121 ms)
    option http-no-delay
    retries 2
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout http-keep-alive 10s
    timeout queue 30s
    # an upgraded websocket: a whole lecture, even while a student only reads
    timeout tunnel 2h
    timeout client-fin 10s
    timeout server-fin 10s

frontend xattn
    # XATTN_BIND: 127.0.0.1 (the default) this machine only, 0.0.0.0 every network interface
    bind ${XATTN_BIND:-127.0.0.1}:$port
    maxconn ${XATTN_MAXCONN:-6000}
    # One client address may not fill the hall: at most XATTN_CONN_PER_ADDRESS connections
    # whose requests carry no class's cookie (1,000 phones behind one NAT load their page and
    # join), and XATTN_WS_PER_ADDRESS such Streamlit websockets, opened at most that many in
    # 10 s (600 idle ones from one client used to fill every process's slots until they
    # closed: benchmarks/idle_sockets.py). Refused: HTTP 429. A request with a class's cookie
    # (a lecturer's host cookie, a joined student's) passes: HAProxy cannot check its
    # signature, each process does (xattn/server/bounds.py), so a flood at the hall's
    # address never refuses the lecturer's reloads or the joined phones' streams. Connections
    # that send no request at all: twice that many, each closed after 10 s (timeout
    # http-request).
    acl class_cookie req.hdr(cookie) -m reg (^|;\ *)xattn_(host|student)_[A-Z2-9]{6}=
    stick-table type ipv6 size 200k expire 10m store conn_cur
    tcp-request connection track-sc0 src
    tcp-request connection reject if { sc0_conn_cur gt $(( 2 * ${XATTN_CONN_PER_ADDRESS:-2500} )) }
    http-request track-sc2 src table per_address_anonymous if !class_cookie
    http-request deny deny_status 429 if !class_cookie { sc2_conn_cur gt ${XATTN_CONN_PER_ADDRESS:-2500} }
    http-request track-sc1 src table per_address_ws if { path /_stcore/stream } !class_cookie
    http-request deny deny_status 429 if { path /_stcore/stream } !class_cookie { sc1_conn_cur gt ${XATTN_WS_PER_ADDRESS:-200} }
    http-request deny deny_status 429 if { path /_stcore/stream } !class_cookie { sc1_http_req_rate gt ${XATTN_WS_PER_ADDRESS:-200} }
    # The path the log shows: an upload's URL names the browser's Streamlit session, and
    # whoever knows a session's id can take it over by reconnecting with it
    http-request set-var(txn.logged_path) path,regsub(/_stcore/upload_file/[^/]*,/_stcore/upload_file/-)
    # The client's address for the app's limits per address: only the one HAProxy sees
    # (option forwardfor adds it); an X-Forwarded-For the client sent is not passed on
    http-request del-header X-Forwarded-For
    default_backend streamlit

backend streamlit
EOF
  if [[ "$affinity" == 0 ]]; then
    cat <<EOF
    # XATTN_AFFINITY=0: NO session affinity, a demonstration of what breaks without it
    balance roundrobin
EOF
  else
    cat <<EOF
    # fewest open connections: students (one websocket each) spread evenly, also after a restart
    balance leastconn
    cookie XATTN_SERVER insert indirect nocache httponly attr "SameSite=Lax"
EOF
  fi
  cat <<EOF
    # which process answered (the cookie says the same when affinity is on): for load tests
    http-response set-header X-Xattn-Server %[srv_name]
    option httpchk
    http-check send meth GET uri /_stcore/health
    http-check expect string ok
    default-server check inter 2s fall 3 rise 2 maxconn ${XATTN_SERVER_MAXCONN:-3000}
EOF
  for (( i = 1; i <= n; i++ )); do
    if [[ "$affinity" == 0 ]]; then
      printf '    server s%d 127.0.0.1:%d\n' "$i" $(( first + i - 1 ))
    else
      printf '    server s%d 127.0.0.1:%d cookie s%d\n' "$i" $(( first + i - 1 )) "$i"
    fi
  done
  cat <<EOF

backend per_address_ws
    # the Streamlit websockets of each client address: how many are open, and opened in 10 s
    stick-table type ipv6 size 200k expire 10m store conn_cur,http_req_rate(10s)

backend per_address_anonymous
    # each client address's connections whose requests carried no class's cookie
    stick-table type ipv6 size 200k expire 10m store conn_cur
EOF
}

# --- arguments --------------------------------------------------------------------------------

print_only=0
if [[ "${1:-}" == "--config" ]]; then
  print_only=1
  shift
fi
[[ $# -ge 1 && $# -le 2 ]] || usage
N=$1
PORT=${2:-8501}
[[ "$N" =~ ^[1-9][0-9]*$ && "$PORT" =~ ^[1-9][0-9]*$ ]] || usage
BACKEND_PORT=${XATTN_BACKEND_PORT:-$(( PORT + 1 ))}
if (( PORT >= BACKEND_PORT && PORT < BACKEND_PORT + N )); then
  echo "serve.sh: PORT $PORT collides with the Streamlit ports $BACKEND_PORT.." >&2
  exit 2
fi

if (( print_only )); then
  haproxy_config "$N" "$PORT" "$BACKEND_PORT"
  exit 0
fi

command -v "$HAPROXY" >/dev/null || { echo "serve.sh: $HAPROXY not found (apt-get install -y haproxy)" >&2; exit 1; }
# the Python runs and has the requirements (tried, not looked up: `command -v` can refuse a
# venv's python that runs, e.g. a symlink into a folder this user may not list)
python_status=0
"$PYTHON" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("streamlit") is None)' \
  2>/dev/null || python_status=$?
if (( python_status == 1 )); then
  echo "serve.sh: $PYTHON has no streamlit: set PYTHON to the Python that has the requirements" \
       "(e.g. .venv/bin/python), or activate its venv" >&2
  exit 1
elif (( python_status != 0 )); then
  echo "serve.sh: $PYTHON cannot be run (status $python_status): set PYTHON to the Python that" \
       "has the requirements (e.g. .venv/bin/python)" >&2
  exit 1
fi
command -v setsid >/dev/null || { echo "serve.sh: setsid not found (apt-get install -y util-linux)" >&2; exit 1; }

BIND="${XATTN_BIND:-127.0.0.1}"
case "$BIND" in          # how this script itself reaches HAProxy
  0.0.0.0) LOCAL=127.0.0.1 ;;
  ::) LOCAL="[::1]" ;;
  *:*) LOCAL="[$BIND]" ;;
  *) LOCAL="$BIND" ;;
esac

# --- stopping: every exit goes through on_exit ------------------------------------------------

declare -a backend_pid=()   # index i-1: pid of process s<i>
haproxy_pid=""
helper_pid=""               # the health check running now, if any
redis_pid=""                # XATTN_START_REDIS: this hall's own redis-server
stopping=0                  # stop_all has begun
hurry=0                     # a second signal while stopping: kill at once
signalled=""                # the exit status the first signal asked for
restarts=0
own_run_dir=0               # RUN_DIR is a temporary directory of this run: removed on exit
RUN_DIR=""
LOG_DIR=""

all_pids() {  # in the order they stop: Redis last, once nothing writes to it
  local pid
  for pid in "${backend_pid[@]}" "$haproxy_pid" "$helper_pid" "$redis_pid"; do
    [[ -n "$pid" ]] && printf '%s\n' "$pid"
  done
  return 0
}

stop_all() {  # SIGTERM to every process, SIGKILL to those left after 15 s (or a second signal)
  (( stopping )) && return 0
  stopping=1
  local pids pid deadline
  mapfile -t pids < <(all_pids)
  [[ ${#pids[@]} -gt 0 ]] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  deadline=$(( SECONDS + 15 ))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline && ! hurry )); do
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid still running: killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  backend_pid=()
  haproxy_pid=""
  helper_pid=""
  redis_pid=""
  say "stopped"
}

on_signal() {  # STATUS NAME: stop everything and exit with STATUS, whatever else is under way
  signalled=${signalled:-$1}
  if (( stopping )); then   # a second signal, or one while another exit stops: hurry that
    hurry=1
    return 0
  fi
  say "$2: stopping"
  stop_all
  exit "$signalled"
}

show_logs() {  # the last lines of every log, on stderr (the run directory is about to go)
  local log
  for log in "$LOG_DIR"/*.log; do
    [[ -s "$log" ]] || continue
    printf 'serve.sh: the last lines of %s:\n' "${log##*/}" >&2
    tail -n 15 -- "$log" | sed 's/^/    /' >&2
  done
  return 0
}

on_exit() {
  local status=$?
  trap - EXIT
  stop_all
  status=${signalled:-$status}
  if (( status == 1 )) && [[ -n "$LOG_DIR" && -d "$LOG_DIR" ]]; then
    show_logs
  fi
  if [[ -n "$RUN_DIR" && -d "$RUN_DIR" ]]; then
    if (( own_run_dir )); then
      rm -rf -- "$RUN_DIR"
    fi
  fi
  exit "$status"
}

trap 'on_signal 130 SIGINT' INT
trap 'on_signal 143 SIGTERM' TERM
trap 'on_signal 129 SIGHUP' HUP
trap on_exit EXIT
# A shell that starts with SIGINT ignored (a background job of a script, some CI runners)
# cannot trap it: Ctrl-C then stops nothing here, so say so.
if [[ "$(trap -p INT)" == "trap -- '' SIGINT" ]]; then
  say "SIGINT was ignored when this started (a background job?): Ctrl-C will not stop it, SIGTERM will"
fi

# --- start ------------------------------------------------------------------------------------

if [[ -n "${XATTN_RUN_DIR:-}" ]]; then
  RUN_DIR="$XATTN_RUN_DIR"
  mkdir -p "$RUN_DIR"
else
  RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/xattn-serve.XXXXXX" 2>/dev/null)" || {
    echo "serve.sh: no run directory can be made in ${TMPDIR:-/tmp}: give a tmpfs there" \
         "(docker run --read-only --tmpfs /tmp), or set XATTN_RUN_DIR to a folder that can be" \
         "written" >&2
    exit 1
  }
  own_run_dir=1
fi
if [[ -n "${XATTN_LOG_DIR:-}" ]]; then
  if ! mkdir -p "$XATTN_LOG_DIR" 2>/dev/null || [[ ! -w "$XATTN_LOG_DIR" ]]; then
    echo "serve.sh: the log folder $XATTN_LOG_DIR (XATTN_LOG_DIR) cannot be written by" \
         "$(id -un): make it, or choose another" >&2
    exit 1
  fi
  LOG_DIR="$XATTN_LOG_DIR"
else
  LOG_DIR="$RUN_DIR"
fi
LOG_MAX_KB="${XATTN_LOG_MAX_KB:-20000}"
LOG_KEEP="${XATTN_LOG_KEEP:-3}"
[[ "$LOG_MAX_KB" =~ ^[1-9][0-9]*$ && "$LOG_KEEP" =~ ^[1-9][0-9]*$ ]] || {
  echo "serve.sh: XATTN_LOG_MAX_KB and XATTN_LOG_KEEP must be whole numbers from 1; they are" \
       "'$LOG_MAX_KB' and '$LOG_KEEP'" >&2
  exit 2
}

rotate_logs() {  # every log past LOG_MAX_KB: copied to .1 (older copies shifted), emptied
  local log size k
  for log in "$LOG_DIR"/s[0-9]*.log "$LOG_DIR"/haproxy.log; do
    [[ -f "$log" ]] || continue
    size=$(stat -c %s -- "$log" 2>/dev/null) || continue
    (( size > LOG_MAX_KB * 1000 )) || continue
    for (( k = LOG_KEEP; k > 1; k-- )); do
      if [[ -f "$log.$(( k - 1 ))" ]]; then
        mv -f -- "$log.$(( k - 1 ))" "$log.$k"
      fi
    done
    # the writers opened it with O_APPEND (>>): after the truncation they write at its new
    # end. Lines written between the copy and the truncation are lost (copytruncate's limit).
    cp -- "$log" "$log.1" && : >"$log"
  done
  return 0
}
rotate_logs     # a previous run's logs, appended to from here

CFG="$RUN_DIR/haproxy.cfg"
haproxy_config "$N" "$PORT" "$BACKEND_PORT" >"$CFG"
"$HAPROXY" -c -q -f "$CFG" || { echo "serve.sh: haproxy -c rejected $CFG" >&2; exit 1; }

ports_free() {  # HOST PORT [HOST PORT ...]: exit 3 naming the first port another program holds
  "$PYTHON" - "$@" <<'PY'
import socket, sys
for host, port in zip(sys.argv[1::2], sys.argv[2::2]):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        # as the servers bind: a closed connection waiting out TIME_WAIT does not count
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, int(port)))
        except OSError as err:
            print(f"serve.sh: port {port} on {host} is in use ({err.strerror}): choose another "
                  "PORT or XATTN_BACKEND_PORT, or stop the program that holds it",
                  file=sys.stderr)
            sys.exit(3)
PY
}
checks=("$BIND" "$PORT")
for (( i = 1; i <= N; i++ )); do
  checks+=(127.0.0.1 $(( BACKEND_PORT + i - 1 )))
done
ports_free "${checks[@]}"

# A phone holds one connection to HAProxy and HAProxy one to a process: a hall of 1,000
# needs more open files than the usual soft limit of 1,024 (the hard limit allows it)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# The processes share one cookie secret (signed auth cookies must verify on every process);
# through the environment, not the command line, so `ps` does not show it.
if [[ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]]; then
  STREAMLIT_SERVER_COOKIE_SECRET="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')"
  export STREAMLIT_SERVER_COOKIE_SECRET
fi

# XATTN_START_REDIS: a Redis of this hall's own, with persistence. Without it a Redis that
# restarts comes back empty: the processes then give it back the rooms they serve (each keeps
# a snapshot), but a class's earlier rooms and any process's that stopped meanwhile are gone.
start_redis() {  # this hall's redis-server on REDIS_DIR's socket and append-only file
  setsid "$REDIS_SERVER" --port 0 --unixsocket "$REDIS_DIR/redis.sock" --unixsocketperm 700 \
      --appendonly yes --appendfsync everysec --save "" --dir "$REDIS_DIR" \
      --logfile "$REDIS_DIR/redis.log" </dev/null >/dev/null 2>&1 &
  redis_pid=$!
  if ! "$PYTHON" - "$REDIS_DIR/redis.sock" <<'PY'
import sys, time
import redis
client = redis.Redis(unix_socket_path=sys.argv[1])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        if client.ping():
            sys.exit(0)
    except (redis.ConnectionError, redis.ResponseError):   # not up yet, or LOADING its file
        time.sleep(0.1)
sys.exit(1)
PY
  then
    echo "serve.sh: redis-server did not answer within 60 s (its log: $REDIS_DIR/redis.log)" >&2
    exit 1
  fi
  say "redis pid $redis_pid socket $REDIS_DIR/redis.sock (append-only file in $REDIS_DIR)"
}
if [[ -n "${XATTN_START_REDIS:-}" ]]; then
  REDIS_DIR="$XATTN_START_REDIS"
  mkdir -p -m 700 "$REDIS_DIR"
  REDIS_SERVER="${REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}"
  start_redis
  export XATTN_REDIS_URL="unix://$REDIS_DIR/redis.sock"
fi

start_backend() {  # i: start process s<i> on BACKEND_PORT+i-1, in a session of its own
  local i=$1 port=$(( BACKEND_PORT + $1 - 1 ))
  # setsid execs in place (a background job leads no process group): $! is Python's pid
  # shellcheck disable=SC2086  # XATTN_STREAMLIT_ARGS is a list of words on purpose
  (cd "$ROOT" && exec setsid "$PYTHON" -m streamlit run app.py \
      --server.port "$port" --server.address 127.0.0.1 --server.headless true \
      --server.fileWatcherType none --server.runOnSave false \
      --browser.gatherUsageStats false ${XATTN_STREAMLIT_ARGS:-}) \
      </dev/null >>"$LOG_DIR/s$i.log" 2>&1 &
  backend_pid[i - 1]=$!
  say "backend s$i pid ${backend_pid[i - 1]} port $port log $LOG_DIR/s$i.log"
}

healthy() {  # PID URL [PID URL ...]: wait until each URL answers "ok" from its PID's socket
  # In the background, so that a signal is handled at once rather than after this returns.
  "$PYTHON" - "${XATTN_START_TIMEOUT:-120}" "$@" <<'PY' &
import os, signal, sys, time, urllib.parse, urllib.request
signal.signal(signal.SIGINT, signal.SIG_DFL)   # Ctrl-C: end at once, without a traceback
deadline = time.monotonic() + float(sys.argv[1])
pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

def listening(port):
    """The sockets (as /proc/PID/fd names them) listening on TCP ``port``, whoever holds them."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = [row.split() for row in f.read().splitlines()[1:]]
        except OSError:
            continue
        found.update(f"socket:[{cols[9]}]" for cols in rows
                     if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port)
    return found

def holds(pid, sockets):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in sockets:
                return True
        except OSError:
            pass
    return False

def taken(port):
    print(f"serve.sh: port {port} was taken by another program: choose another PORT or "
          "XATTN_BACKEND_PORT, or stop the program that holds it", file=sys.stderr)
    sys.exit(3)

for pid, url in pairs:
    port = urllib.parse.urlsplit(url).port
    while True:
        if not alive(pid):
            if listening(port):
                taken(port)
            sys.exit(f"serve.sh: pid {pid} exited before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                ok = r.read().strip() == b"ok"
        except OSError:
            ok = False
        if ok and holds(pid, listening(port)):
            break
        if ok:   # the answer came from another program listening on this port
            taken(port)
        if time.monotonic() > deadline:
            sys.exit(f"serve.sh: {url} did not answer ok in time")
        time.sleep(0.25)
PY
  helper_pid=$!
  wait "$helper_pid"
  helper_pid=""
}

for (( i = 1; i <= N; i++ )); do
  start_backend "$i"
done
checks=()
for (( i = 1; i <= N; i++ )); do
  checks+=("${backend_pid[i - 1]}" "http://127.0.0.1:$(( BACKEND_PORT + i - 1 ))/_stcore/health")
done
healthy "${checks[@]}"
say "$N Streamlit processes healthy"

# Through cat, which appends: HAProxy sets its stdout non-blocking and drops O_APPEND with it,
# so it wrote from the start of a kept log (over a previous run's lines) and, after the log was
# emptied by rotate_logs, on at its old offset (a file of zeros up to there)
setsid "$HAPROXY" -db -f "$CFG" </dev/null > >(exec cat >>"$LOG_DIR/haproxy.log") 2>&1 &
haproxy_pid=$!
say "haproxy pid $haproxy_pid port $PORT config $CFG log $LOG_DIR/haproxy.log"
healthy "$haproxy_pid" "http://$LOCAL:$PORT/_stcore/health"
affinity_text="cookie affinity"
[[ "${XATTN_AFFINITY:-1}" == 0 ]] && affinity_text="NO affinity (XATTN_AFFINITY=0: a demonstration)"
say "ready http://$LOCAL:$PORT/ ($N processes, $affinity_text; listening on $BIND; Ctrl-C stops everything)"

# --- supervise --------------------------------------------------------------------------------

# `wait -n` alone can miss a process: one that a signal ended while this script was busy (bash
# then reports it, "Killed", and `wait -n` waits for the next one). So a one-second tick wakes
# the wait, and every process is looked at before each wait.
tick=""
ticks=0
while true; do
  dead=""
  status=0
  for pid in "${backend_pid[@]}" "$haproxy_pid" "$redis_pid"; do
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      dead=$pid
      wait "$dead" 2>/dev/null || status=$?   # bash keeps its status, reported or not
      break
    fi
  done
  if [[ -z "$dead" ]]; then
    if [[ -z "$tick" ]]; then
      sleep 1 &
      tick=$!
    fi
    wait -n -p dead || status=$?
    [[ -n "$dead" ]] || continue          # a trapped signal interrupted wait (its trap exits)
    if [[ "$dead" == "$tick" ]]; then
      tick=""
      ticks=$(( ticks + 1 ))
      (( ticks % 5 )) || rotate_logs
      continue
    fi
  fi
  if [[ "$dead" == "$haproxy_pid" ]]; then
    haproxy_pid=""
    say "haproxy exited with status $status: stopping"
    exit 1
  fi
  if [[ -n "$redis_pid" && "$dead" == "$redis_pid" ]]; then   # its file keeps every class
    if (( restarts >= ${XATTN_MAX_RESTARTS:-5} )); then
      redis_pid=""
      say "redis exited with status $status after $restarts restarts: stopping"
      exit 1
    fi
    restarts=$(( restarts + 1 ))
    say "redis exited with status $status: restarting it on its file (restart $restarts)"
    start_redis
    continue
  fi
  for (( i = 1; i <= N; i++ )); do
    [[ "${backend_pid[i - 1]}" == "$dead" ]] || continue
    if (( status == 0 || status == 130 || status == 143 )); then
      # a clean stop (SIGINT, SIGTERM from someone else): the operator wants it down
      backend_pid[i - 1]=""
      say "backend s$i stopped (status $status): stopping everything"
      exit 0
    fi
    if (( restarts >= ${XATTN_MAX_RESTARTS:-5} )); then
      backend_pid[i - 1]=""
      say "backend s$i exited with status $status after $restarts restarts: stopping"
      exit 1
    fi
    restarts=$(( restarts + 1 ))
    say "backend s$i exited with status $status: restarting it (restart $restarts)"
    start_backend "$i"
  done
done
