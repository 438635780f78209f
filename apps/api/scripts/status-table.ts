// Writes the status table of docs/api.md (between its markers) from the operations' declarations:
//   pnpm --filter @switchyard/api status-table
// test/http/statuses.test.ts fails while docs/api.md and the declarations disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { STATUS_TABLE_BEGIN, STATUS_TABLE_END, statusTable } from '../src/http/operations.js';
import { BYTE_ROUTE_MOUNTS } from '../src/modules.js';
import { appRouter } from '../src/router.js';

const page = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
const text = readFileSync(page, 'utf8');
const begin = text.indexOf(STATUS_TABLE_BEGIN);
const end = text.indexOf(STATUS_TABLE_END);
if (begin < 0 || end < begin) throw new Error(`docs/api.md has no ${STATUS_TABLE_BEGIN} ... ${STATUS_TABLE_END} section`);
const updated = `${text.slice(0, begin + STATUS_TABLE_BEGIN.length)}\n${statusTable(appRouter, BYTE_ROUTE_MOUNTS)}\n${text.slice(end)}`;
writeFileSync(page, updated);
console.log(updated === text ? 'docs/api.md: status table unchanged' : 'docs/api.md: status table written');
