// `pnpm db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database under
// DATA_DIR (default ./.data) when DATABASE_URL is not set.
import path from 'node:path';
import { provisionDatabase } from '../database.js';
import { migrate } from '../migrate.js';

const log = (message: string) => console.log(message);
const database = await provisionDatabase({
  databaseUrl: process.env.DATABASE_URL || undefined,
  dataDir: path.resolve(process.env.DATA_DIR || '.data'),
  log,
});
try {
  const result = await migrate(database.url, { log });
  log(`${result.applied.length} migration(s) applied, ${result.alreadyApplied} already applied`);
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
} finally {
  await database.close();
}
