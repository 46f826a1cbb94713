# A throwaway PostgreSQL on 127.0.0.1 for the tests (Debian's postgresql package).
#
# Sourced by `make test`:
#     . scripts/postgres.sh && start_test_postgres; .venv/bin/python -m pytest
# starts a server when the binaries are installed, exports DEEPRESEARCH_TEST_POSTGRES (a
# postgresql:// URL) and stops the server when that shell exits. Without PostgreSQL it
# prints a note and does nothing: tests/test_postgres.py then starts one itself through
#     scripts/postgres.sh start DIR     (prints the URL; the server keeps running)
#     scripts/postgres.sh stop DIR
# and fails (it is never skipped) when it cannot. CI installs the package: see .ci/run.
# As root, initdb and the server run as the `postgres` user (which the package creates).

pg_bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

pg_free_port() {
  # a free port on 127.0.0.1 (the kernel picks it); falls back to one derived from the pid
  for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1; then
      "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' && return 0
    fi
  done
  echo $(( 20000 + $$ % 20000 ))
}

# pg_start DIR: initdb in DIR/data and start a server on 127.0.0.1; prints the URL.
pg_start() {
  local dir=$1 bindir port runas=""
  bindir=$(pg_bindir)
  if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "postgres: no server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2
    return 1
  fi
  mkdir -p "$dir" || return 1
  if [ "$(id -u)" = "0" ]; then
    if ! id postgres >/dev/null 2>&1; then
      echo "postgres: running as root but there is no 'postgres' user to run the server" >&2
      return 1
    fi
    runas="runuser -u postgres --"
    chown postgres "$dir" || return 1
    if ! $runas test -w "$dir"; then
      echo "postgres: the postgres user cannot reach $dir (a parent folder is private); use a folder under /tmp" >&2
      return 1
    fi
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    $runas "$bindir/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { echo "postgres: initdb failed (see $dir/initdb.log)" >&2; return 1; }
  fi
  local tries=0
  while :; do
    port=$(pg_free_port)
    if $runas "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null 2>&1; then
      break
    fi
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then
      echo "postgres: start failed (see $dir/log)" >&2
      return 1
    fi
  done
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

# pg_stop DIR: stop the server started in DIR and remove DIR.
pg_stop() {
  local dir=$1 bindir runas=""
  bindir=$(pg_bindir)
  [ "$(id -u)" = "0" ] && runas="runuser -u postgres --"
  if [ -n "$bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
    $runas "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$dir"
}

# start_test_postgres: for `make test` (sourced); exports DEEPRESEARCH_TEST_POSTGRES.
start_test_postgres() {
  if [ -n "${DEEPRESEARCH_TEST_POSTGRES:-}" ]; then
    echo "postgres: using DEEPRESEARCH_TEST_POSTGRES from the environment" >&2
    return 0
  fi
  if [ -z "$(pg_bindir)" ]; then
    echo "postgres: not installed; tests/test_postgres.py will try to start one and fail without it" >&2
    return 0
  fi
  _dr_pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/deepresearch-pg.XXXXXX") || return 0
  local url
  if url=$(pg_start "$_dr_pg_dir"); then
    export DEEPRESEARCH_TEST_POSTGRES="$url"
    trap 'pg_stop "$_dr_pg_dir"' EXIT
    echo "postgres: test server at $url" >&2
  else
    rm -rf "$_dr_pg_dir"
  fi
  return 0
}

# run as a program: scripts/postgres.sh start DIR | stop DIR
case "${0##*/}" in
  postgres.sh)
    case "${1:-}" in
      start) [ -n "${2:-}" ] || { echo "usage: $0 start DIR" >&2; exit 2; }; pg_start "$2" ;;
      stop) [ -n "${2:-}" ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; pg_stop "$2" ;;
      *) echo "usage: $0 start DIR | stop DIR  (or source it and call start_test_postgres)" >&2; exit 2 ;;
    esac
    ;;
esac
