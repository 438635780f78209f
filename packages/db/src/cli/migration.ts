// `pnpm db:migration:new <name>` and `pnpm db:drift`: see ../migration-authoring.ts.
import { migrationCommand, UsageError, USAGE } from '../migration-authoring.js';

try {
  process.exitCode = await migrationCommand(process.argv.slice(2), (text) => process.stdout.write(text));
} catch (error) {
  console.error(error instanceof UsageError ? `error: ${error.message}\n\n${USAGE}` : `error: ${(error as Error)?.message ?? error}`);
  process.exitCode = 2;
}
