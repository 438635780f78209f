#!/usr/bin/env bash
# Runs the whole test suite against a second, independent PostgreSQL server: the machine's own
# PostgreSQL 15 (initdb/pg_ctl on PATH, or in PG15_BIN), in a throwaway cluster on a free port.
set -euo pipefail
. "$(dirname "$0")/pg15.sh"
pg15_start
echo "test:pg15: $("$pg15_bin/postgres" --version) on 127.0.0.1:$pg15_port"

TEST_DATABASE_URL="postgresql://postgres@127.0.0.1:$pg15_port/postgres" pnpm test
