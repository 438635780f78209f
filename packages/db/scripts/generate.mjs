// Runs `prisma generate` for ../../prisma/schema.prisma without Prisma's engine download.
// The CLI tries to fetch its schema engine at start unless PRISMA_SCHEMA_ENGINE_BINARY names an
// executable; generation itself needs no engine, so any executable will do.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const schema = path.resolve(here, '../../../prisma/schema.prisma');
const prismaCli = createRequire(import.meta.url).resolve('prisma/build/index.js');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/false',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const result = spawnSync(process.execPath, [prismaCli, 'generate', '--schema', schema], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
