// The analytics worker thread (analytics-workers.ts starts it): runs one query's statement on a
// connection of its own and shapes the answer from its rows (analytics-shape.ts), so that neither
// the rows nor their shaping ever reach the server's event loop. Only the answer's rows go back.
import { workerData } from 'node:worker_threads';
import pg from 'pg';
import { shapeRows, sqlRowSchema, type Row, type ShapePlan } from './analytics-shape.js';

/** One query: its statement and parameters, when its time is up (ms since the epoch), and how to shape its rows. */
export interface AnalyticsTask {
  sql: string;
  params: unknown[];
  deadline: number;
  plan: ShapePlan;
}

/**
 * The answer's rows; or the query's time was up (before its statement, by the statement's
 * statement_timeout, or while shaping); or the statement's failure as plain data (errors lose their
 * fields crossing threads).
 */
export type AnalyticsTaskResult = { rows: Row[]; truncated: boolean } | { timedOut: true } | { failed: { message: string; code?: string; severity?: string } };

/** PostgreSQL's work_mem for one query: its grouping (each group's sums and histograms gathered as JSON text) stays in memory. */
const QUERY_WORK_MEM = '64MB';

const { databaseUrl, connections } = workerData as { databaseUrl: string; connections: number };
const pool = new pg.Pool({ connectionString: databaseUrl, max: connections, application_name: 'switchyard-analytics' });
// An idle connection the server dropped must not end the thread; the next query reconnects.
pool.on('error', () => undefined);
// Timestamps as Dates (the pg default), numerics as text: the sums are cast to text in SQL anyway.

/**
 * Runs one query. Its time is bounded without stopping the thread, which other organizations'
 * queries share: the statement by statement_timeout (what is left of the query's time), the shaping
 * by checks of the deadline as it goes (shapeRows).
 */
export default async function run(task: AnalyticsTask): Promise<AnalyticsTaskResult> {
  let client: pg.PoolClient | undefined;
  try {
    if (Date.now() >= task.deadline) return { timedOut: true };
    client = await pool.connect();
    await client.query('BEGIN');
    let rows: unknown[];
    try {
      // Enough memory for the query's aggregates not to spill to disk, and a time limit past which
      // the answer is 408 (all three only for this statement's transaction).
      await client.query(`SET LOCAL work_mem = '${QUERY_WORK_MEM}'`);
      // One process per statement: parallel workers would give one organization's queries more of
      // the database's CPU than its share of the slots.
      await client.query('SET LOCAL max_parallel_workers_per_gather = 0');
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(task.deadline - Date.now()))}`);
      rows = (await client.query({ text: task.sql, values: task.params })).rows;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    const schema = sqlRowSchema(task.plan.dimensions.length, task.plan.histograms);
    return (
      shapeRows(
        rows.map((row) => schema.parse(row)),
        task.plan,
        task.deadline,
      ) ?? { timedOut: true }
    );
  } catch (error) {
    // 57014 query_canceled: the statement ran past its statement_timeout (or was cancelled). The
    // thread does not load db-errors.ts, which would bring Prisma into it.
    if ((error as { code?: unknown }).code === '57014') return { timedOut: true };
    const { message, code, severity } = error as { message?: unknown; code?: unknown; severity?: unknown };
    return {
      failed: {
        message: typeof message === 'string' ? message : String(error),
        ...(typeof code === 'string' ? { code } : {}),
        ...(typeof severity === 'string' ? { severity } : {}),
      },
    };
  } finally {
    client?.release();
  }
}
