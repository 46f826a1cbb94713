# Sourced by `make test`: start a throwaway PostgreSQL on 127.0.0.1 when the server
# binaries are installed, and export DEEPRESEARCH_TEST_POSTGRES for the tests that use it.
# Without PostgreSQL this does nothing (CI installs it: see .ci/run).
start_test_postgres() {
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    return 0
  fi
  local dir=${TMPDIR:-/tmp}/deepresearch-pg-$$
  local port=$(( 20000 + $$ % 20000 ))
  local runas=""
  if [ "$(id -u)" = "0" ]; then
    id postgres >/dev/null 2>&1 || return 0
    runas="runuser -u postgres --"
    mkdir -p "$dir" && chown postgres "$dir"
  else
    mkdir -p "$dir"
  fi
  $runas "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null 2>&1 || { echo "postgres: initdb failed" >&2; return 0; }
  $runas "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off" start >/dev/null 2>&1 \
    || { echo "postgres: start failed (see $dir/log)" >&2; return 0; }
  export DEEPRESEARCH_TEST_POSTGRES="postgresql://postgres@127.0.0.1:$port/postgres"
  trap "$runas '$bindir/pg_ctl' -D '$dir/data' -m immediate stop >/dev/null 2>&1; rm -rf '$dir'" EXIT
  echo "postgres: test server on 127.0.0.1:$port" >&2
}
