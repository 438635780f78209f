#!/usr/bin/env bash
# Makes this release's upgrade fixture (docs/operations.md#upgrades): a database filled by
# `switchyard demo`, dumped as plain SQL to test/fixtures/upgrade/<version>.sql, and the bytes it
# stored, copied to test/fixtures/upgrade/<version>.blobs/. The upgrade test restores the previous
# release's fixture, migrates it to HEAD and runs the demo and the spec's operations on it.
#
# The dump is made on the machine's PostgreSQL 15 (scripts/pg15.sh): its pg_dump reads servers up to
# 15, and a plain dump of 15 restores into every later PostgreSQL (the embedded one is 18). Keys and
# the secret key are the test-only ones of test/fixtures/upgrade/keys.json.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pg15.sh

version=$(node -p 'require("./apps/api/package.json").version')
out=test/fixtures/upgrade
key() { node -p "require('./$out/keys.json').$1"; }

pnpm -s build >/dev/null
pg15_start
"$pg15_bin/createdb" -h 127.0.0.1 -p "$pg15_port" -U postgres switchyard
data=$(mktemp -d /tmp/switchyard-fixture-XXXXXX)
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

DATABASE_URL="postgresql://postgres@127.0.0.1:$pg15_port/switchyard" DATA_DIR="$data" HOST=127.0.0.1 PORT=$port LOG_LEVEL=warn \
  SWITCHYARD_BOOTSTRAP_KEY=$(key management_key) SWITCHYARD_PLATFORM_KEY=$(key platform_key) SWITCHYARD_SECRET_KEY=$(key secret_key) \
  node apps/api/dist/main.js >"$data/server.log" 2>&1 &
server=$!
stop_all() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; pg15_stop; rm -rf "$data"; }
trap stop_all EXIT
for _ in $(seq 1 300); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.log" >&2; exit 1; }
  sleep 0.1
done

SWITCHYARD_URL="http://127.0.0.1:$port" SWITCHYARD_API_KEY=$(key management_key) SWITCHYARD_PLATFORM_KEY=$(key platform_key) \
  node apps/cli/dist/main.js demo >/dev/null
kill "$server" && wait "$server" || true

# Plain SQL with INSERTs (no COPY blocks: any client restores it), without owners or grants, and
# without psql's \restrict lines: the test restores it through node-postgres.
"$pg15_bin/pg_dump" -h 127.0.0.1 -p "$pg15_port" -U postgres --inserts --rows-per-insert=100 --no-owner --no-privileges switchyard \
  | grep -v '^\\' >"$out/$version.sql"
rm -rf "$out/$version.blobs"
cp -r "$data/blobs" "$out/$version.blobs"
echo "wrote $out/$version.sql ($(wc -c <"$out/$version.sql") bytes) and $out/$version.blobs ($(du -sh "$out/$version.blobs" | cut -f1))"
