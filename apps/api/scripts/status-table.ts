// Writes the README's status table (between its markers) from the operations' declarations:
//   pnpm --filter @switchyard/api status-table
// test/statuses.test.ts fails while the README and the declarations disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { README_TABLE_BEGIN, README_TABLE_END, statusTable } from '../src/http/operations.js';
import { appRouter } from '../src/router.js';

const readme = fileURLToPath(new URL('../../../README.md', import.meta.url));
const text = readFileSync(readme, 'utf8');
const begin = text.indexOf(README_TABLE_BEGIN);
const end = text.indexOf(README_TABLE_END);
if (begin < 0 || end < begin) throw new Error(`README.md has no ${README_TABLE_BEGIN} ... ${README_TABLE_END} section`);
const updated = `${text.slice(0, begin + README_TABLE_BEGIN.length)}\n${statusTable(appRouter)}\n${text.slice(end)}`;
writeFileSync(readme, updated);
console.log(updated === text ? 'README.md: status table unchanged' : 'README.md: status table written');
