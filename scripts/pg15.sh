# Sourced by scripts that need a throwaway PostgreSQL 15 cluster (the machine's own: initdb/pg_ctl
# on PATH, or in PG15_BIN): `pg15_start` sets $pg15_bin, $pg15_dir and $pg15_port, starts the cluster
# on 127.0.0.1:$pg15_port (user postgres, trust), and stops and removes it when the script exits.
pg15_start() {
  pg15_bin=${PG15_BIN:-}
  if [ -z "$pg15_bin" ]; then
    for candidate in /usr/lib/postgresql/15/bin "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"; do
      if [ -x "$candidate/initdb" ] && "$candidate/postgres" --version | grep -q ' 15\.'; then pg15_bin=$candidate; break; fi
    done
  fi
  if [ -z "$pg15_bin" ]; then
    echo "no PostgreSQL 15 server binaries found (set PG15_BIN)" >&2
    exit 1
  fi
  pg15_dir=$(mktemp -d /tmp/switchyard-pg15-XXXXXX)
  chmod 711 "$pg15_dir"
  pg15_as=()
  if [ "$(id -u)" = 0 ]; then pg15_as=(runuser -u postgres --); chown postgres "$pg15_dir"; fi
  pg15_port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  trap pg15_stop EXIT
  "${pg15_as[@]}" "$pg15_bin/initdb" -D "$pg15_dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
  "${pg15_as[@]}" "$pg15_bin/pg_ctl" start -D "$pg15_dir/data" -w -s -l "$pg15_dir/server.log" \
    -o "-c listen_addresses=127.0.0.1 -c port=$pg15_port -c unix_socket_directories='' -c max_connections=200"
}

pg15_stop() {
  "${pg15_as[@]}" "$pg15_bin/pg_ctl" stop -D "$pg15_dir/data" -m fast -w >/dev/null 2>&1 || true
  rm -rf "$pg15_dir"
}
