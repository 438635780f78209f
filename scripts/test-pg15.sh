#!/usr/bin/env bash
# Runs the whole test suite against a second, independent PostgreSQL server: the machine's own
# PostgreSQL 15 (initdb/pg_ctl on PATH, or in PG15_BIN), in a throwaway cluster on a free port.
set -euo pipefail

bin=${PG15_BIN:-}
if [ -z "$bin" ]; then
  for candidate in /usr/lib/postgresql/15/bin "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"; do
    if [ -x "$candidate/initdb" ] && "$candidate/postgres" --version | grep -q ' 15\.'; then bin=$candidate; break; fi
  done
fi
if [ -z "$bin" ]; then
  echo "test:pg15: no PostgreSQL 15 server binaries found (set PG15_BIN)" >&2
  exit 1
fi

dir=$(mktemp -d /tmp/switchyard-pg15-XXXXXX)
chmod 711 "$dir"
as_pg=()
if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); chown postgres "$dir"; fi
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

cleanup() {
  "${as_pg[@]}" "$bin/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" start -D "$dir/data" -w -s -l "$dir/server.log" \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='' -c max_connections=200"
echo "test:pg15: $("$bin/postgres" --version) on 127.0.0.1:$port"

TEST_DATABASE_URL="postgresql://postgres@127.0.0.1:$port/postgres" pnpm test
