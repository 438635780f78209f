export { columnsOf, decimalText, parsedJson, modelColumns, ORG_ROLE_LABELS, orgRoleColumn, rawRows, RowMismatch, rowOrNulls, type RowSchema } from './rows.js';
export {
  createDb,
  inTransaction,
  namedStatement,
  orderedValues,
  poolStats,
  queryRows,
  statement,
  withAdvisoryLock,
  type Db,
  type DbOptions,
  type Statement,
  type StatementValues,
  type TransactionRows,
} from './client.js';
export { migrate, readMigrations, defaultMigrationsDir, type Migration, type MigrateResult } from './migrate.js';
export { startEmbeddedPostgres, embeddedBinaries, freePort, type EmbeddedPostgres, type EmbeddedPostgresOptions } from './embedded.js';
export {
  checkDatabaseUrl,
  DatabaseUrlError,
  DEFAULT_CONNECT_TIMEOUT_MS,
  ensureDatabaseExists,
  maskedUrl,
  provisionDatabase,
  type DatabaseHandle,
} from './database.js';
// The generated client: PrismaClient, the Prisma namespace, enums and one type per model.
export * from './generated/prisma/client.js';
export { listen, LISTENER_APPLICATION_NAME, type Listener, type ListenHandlers, type ListenOptions } from './notifications.js';
export {
  BackupError,
  dumpDatabase,
  findPgTools,
  physicalBackup,
  restoreDatabase,
  restorePhysical,
  runningEmbeddedPort,
  serverFacts,
  withEmbeddedDatabase,
  type PgTools,
  type ServerFacts,
} from './backup.js';
