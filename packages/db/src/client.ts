import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export type Db = PrismaClient;

export interface DbOptions {
  /** Largest number of pooled connections. */
  poolMax?: number;
}

/** A Prisma client over node-postgres (the driver adapter; no query engine binary). */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolMax ?? 10 });
  return new PrismaClient({ adapter });
}
