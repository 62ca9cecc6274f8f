#!/usr/bin/env bash
# The image's entrypoint (Dockerfile): the lecture hall on the port the platform gives.
#
#   deploy/entrypoint.sh          run deploy/serve.sh N PORT in the foreground (it becomes PID 1)
#   deploy/entrypoint.sh --plan   print what it would run, and exit
#
# N Streamlit processes behind HAProxy (deploy/serve.sh), HAProxy listening on every interface.
# CI runs this script directly, as the container would (tests/test_container.py), since the
# machines that test it have no Docker daemon. `docker stop` sends SIGTERM: serve.sh stops
# HAProxy and every process (up to 15 s: give `docker run --stop-timeout 30`).
#
# Environment (all optional):
#   PORT=8501                 the port to listen on (Cloud Run, Render and Fly set it; a Space
#                             uses the README's app_port: 8501)
#   XATTN_PROCESSES           Streamlit processes (default: the container's CPUs, from its
#                             cgroup's quota or else the CPUs it may run on, at most one per
#                             600 MB of its memory limit, at least 1)
#   XATTN_DATA=/data          the folder of the class store's SQLite file (a volume), unless
#                             XATTN_REDIS_URL is set
#   XATTN_CLASS_STORE         the SQLite file itself (default: $XATTN_DATA/classes.sqlite3)
#   XATTN_REDIS_URL           a Redis that several containers share (then no SQLite file)
#   XATTN_SECRET              the same secret on every container of a class (students' ids)
#   XATTN_PUBLIC_URL          the address phones open (the QR code), e.g.
#                             https://USER-SPACE.hf.space (default: the lecturer's page's own)
#   XATTN_BIND=0.0.0.0        the address HAProxy listens on
#   XATTN_LOG_DIR             where the processes' and HAProxy's logs go, kept across restarts
#                             and bounded (serve.sh's XATTN_LOG_MAX_KB, XATTN_LOG_KEEP); default
#                             $XATTN_DATA/logs where that folder can be written, else none:
#                             then they go with serve.sh's run directory in $TMPDIR or /tmp
#   XATTN_CGROUP=/sys/fs/cgroup  where the container's limits are read (tests point it elsewhere)
#   PYTHON                    the Python that has the requirements (default: the active venv's,
#                             $VIRTUAL_ENV/bin/python, else python3 on PATH: the image's)
# and every setting of deploy/serve.sh (its header lists them).
#
# Read-only root: only $XATTN_DATA (a volume) and /tmp (a tmpfs) are written, e.g.
#   docker run --read-only --tmpfs /tmp -v xattn-data:/data -p 8501:8501 xattn
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CGROUP="${XATTN_CGROUP:-/sys/fs/cgroup}"
BUDGET_MB=600               # a Streamlit process's memory budget (docs/deploy.md)

cpus() {  # the CPUs this container may use: its cgroup's quota (v2, then v1), else nproc
  local quota period n
  n=$(nproc)
  if [[ -r "$CGROUP/cpu.max" ]]; then
    read -r quota period <"$CGROUP/cpu.max"
  elif [[ -r "$CGROUP/cpu/cpu.cfs_quota_us" && -r "$CGROUP/cpu/cpu.cfs_period_us" ]]; then
    quota=$(<"$CGROUP/cpu/cpu.cfs_quota_us") period=$(<"$CGROUP/cpu/cpu.cfs_period_us")
  fi
  if [[ "${quota:-max}" =~ ^[0-9]+$ && "${period:-0}" =~ ^[1-9][0-9]*$ ]] && (( quota > 0 )); then
    quota=$(( (quota + period - 1) / period ))           # 1.5 cores: 2 processes
    (( quota < n )) && n=$quota
  fi
  echo "$n"
}

memory_mb() {  # the container's memory limit in MB, or nothing where there is none
  local limit=""
  if [[ -r "$CGROUP/memory.max" ]]; then
    limit=$(<"$CGROUP/memory.max")
  elif [[ -r "$CGROUP/memory/memory.limit_in_bytes" ]]; then
    limit=$(<"$CGROUP/memory/memory.limit_in_bytes")
  fi
  # cgroup v1 says "no limit" with a number near 2^63
  if [[ "$limit" =~ ^[0-9]+$ ]] && (( ${#limit} < 16 )); then
    echo $(( limit / 1000000 ))
  fi
}

processes() {
  local n mb
  if [[ -n "${XATTN_PROCESSES:-}" ]]; then
    [[ "$XATTN_PROCESSES" =~ ^[1-9][0-9]*$ ]] || {
      echo "entrypoint: XATTN_PROCESSES must be a whole number from 1; it is '$XATTN_PROCESSES'" >&2
      exit 2
    }
    echo "$XATTN_PROCESSES"
    return
  fi
  n=$(cpus)
  mb=$(memory_mb)
  if [[ -n "$mb" ]] && (( mb / BUDGET_MB < n )); then
    n=$(( mb / BUDGET_MB ))
  fi
  echo $(( n < 1 ? 1 : n ))
}

PORT="${PORT:-8501}"
# the Python it was started with (serve.sh chooses the same way; said here for the log line)
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
    PYTHON="$VIRTUAL_ENV/bin/python"
  else
    PYTHON=python3
  fi
fi
export PYTHON
N="$(processes)"
export XATTN_BIND="${XATTN_BIND:-0.0.0.0}"
if [[ -n "${XATTN_REDIS_URL:-}" ]]; then
  store="redis (XATTN_REDIS_URL)"
else
  export XATTN_CLASS_STORE="${XATTN_CLASS_STORE:-${XATTN_DATA:-/data}/classes.sqlite3}"
  store="sqlite $XATTN_CLASS_STORE"
fi
public="${XATTN_PUBLIC_URL:-the lecturer's page's own address}"

if [[ "${1:-}" == "--plan" ]]; then
  echo "processes $N; port $PORT on $XATTN_BIND; store $store; phones open $public"
  exit 0
fi
[[ $# -eq 0 ]] || { sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

if [[ -z "${XATTN_REDIS_URL:-}" ]]; then
  folder="$(dirname "$XATTN_CLASS_STORE")"
  if ! mkdir -p "$folder" 2>/dev/null || [[ ! -w "$folder" ]]; then
    echo "entrypoint: the class store's folder $folder cannot be written by $(id -un): mount" \
         "a volume there that this user may write, or set XATTN_DATA" >&2
    exit 1
  fi
fi
if [[ -z "${XATTN_LOG_DIR:-}" ]]; then
  logs="${XATTN_DATA:-/data}/logs"
  if mkdir -p "$logs" 2>/dev/null && [[ -w "$logs" ]]; then
    export XATTN_LOG_DIR="$logs"
  fi
fi
echo "xattn: entrypoint: $N processes, port $PORT, store $store, phones open $public," \
     "python $PYTHON, logs ${XATTN_LOG_DIR:-in the run directory (removed on exit)}"
exec "$ROOT/deploy/serve.sh" "$N" "$PORT"
