import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export type Db = PrismaClient;

export interface DbOptions {
  /** Largest number of pooled connections. */
  poolMax?: number;
  /** Called with every SQL statement sent, and its parameters as a JSON array (tests EXPLAIN the real queries). */
  onQuery?: (event: { query: string; params: string }) => void;
}

/** A Prisma client over node-postgres (the driver adapter; no query engine binary). */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolMax ?? 10 });
  if (!options.onQuery) return new PrismaClient({ adapter });
  const client = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  client.$on('query', options.onQuery);
  return client as unknown as Db;
}
