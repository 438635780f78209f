// Delivery and a crash: the server process is killed (SIGKILL) while its webhook
// deliveries are in flight. After a restart every event is delivered, each with its own event id
// (the one its interrupted attempt carried): none is lost.
import { once } from 'node:events';
import fs from 'node:fs/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@switchyard/db';
import { createTestDatabase, scaled } from '@switchyard/db/testing';
import { describe, expect, inject, it } from 'vitest';
import { emitEvent } from '../../src/modules/events/emit.js';
import { until } from '../fixtures.js';
import { start } from '../fixtures-process.js';

describe('webhook delivery when the server is killed mid-delivery', () => {
  it(
    'delivers every event after a restart, with the same event ids',
    async () => {
      const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-delivery-crash-'));
      const key = `sk-sy-v1-${'ab'.repeat(32)}`;
      const env = {
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SWITCHYARD_BOOTSTRAP_KEY: key,
        SWITCHYARD_PLATFORM_KEY: `sk-sy-platform-v1-${'cd'.repeat(32)}`,
        UPSTREAM_ALLOWED_HOSTS: '127.0.0.1',
        DELIVERY_POLL_MS: '50',
        DELIVERY_TIMEOUT_MS: '3000',
        STORAGE_SWEEP_INTERVAL_MS: '0',
      };
      // The receiver holds every request unanswered until told to answer.
      let answering = false;
      const received: IncomingHttpHeaders[] = [];
      const receiver = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          received.push(req.headers);
          if (answering) res.writeHead(204).end();
        });
      });
      receiver.listen(0, '127.0.0.1');
      await once(receiver, 'listening');
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const db = createDb(database.url);
      try {
        let proc = await start(env);
        const created = await fetch(`${proc.url}/api/v1/observability/destinations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'webhook', name: 'crash', config: { url } }),
        });
        expect(created.status, await created.clone().text()).toBe(201);
        const organization = await db.organization.findFirstOrThrow();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const { id } = await emitEvent(db, {
            type: 'credits.low',
            cause: `crash-test:${i}`,
            organizationId: organization.id,
            workspaceId: null,
            payload: { version: 1, n: i },
          });
          ids.push(id!);
        }
        // Every delivery is in flight (taken, its request at the receiver, unanswered): the server dies.
        await until(() => received.length === 5, { what: 'the five deliveries to reach the receiver' });
        proc.child.kill('SIGKILL');
        await proc.exited;
        expect(await db.eventDelivery.count({ where: { status: 'delivered' } })).toBe(0);

        answering = true;
        proc = await start(env);
        await until(async () => (await db.eventDelivery.count({ where: { status: 'delivered' } })) === 5, {
          what: 'every delivery done after the restart (once the leases of the killed server end)',
          timeoutMs: scaled(60_000),
        });
        const after = received.slice(5).map((headers) => headers['webhook-id']);
        expect(new Set(after)).toEqual(new Set(ids));
        expect(new Set(received.slice(0, 5).map((headers) => headers['webhook-id']))).toEqual(new Set(ids));
        proc.child.kill('SIGTERM');
        await proc.exited;
      } finally {
        receiver.closeAllConnections();
        receiver.close();
        await db.$disconnect();
        await database.drop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(300_000),
  );
});
