// Test support: a real S3 protocol server on loopback (s3rver, patched: see pnpm-workspace.yaml),
// one per test process, started on first use, its objects in a temporary directory. Each test
// server gets a bucket of its own. s3rver is a dev dependency: only tests load it.
import '../lib/aws-sdk-notice.js';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type S3rver from 's3rver';

/** s3rver's fixed credentials. */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface TestS3 {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /** A new, empty bucket. */
  createBucket(): Promise<string>;
  /** The configuration variables of a server that stores in `bucket` (under `prefix`). */
  env(bucket: string, prefix?: string): Record<string, string>;
  /** Stops answering (connections refused) until `resume()`: every server of this process loses its store. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
}

let shared: Promise<TestS3> | undefined;
let running: S3rver | undefined;

/** The S3 server of this test process. */
export function testS3(): Promise<TestS3> {
  shared ??= start();
  return shared;
}

async function start(): Promise<TestS3> {
  const { default: S3rverClass } = (await import('s3rver')) as unknown as { default: typeof S3rver };
  // Under a vitest run, the run's scratch directory (removed after the last test process, whose
  // exit handlers do not run); elsewhere (the bench), the temporary directory, removed on exit.
  const directory = await fs.mkdtemp(path.join(process.env.SWITCHYARD_TEST_SCRATCH ?? os.tmpdir(), 'switchyard-test-s3-'));
  const launch = async (port: number) => {
    const server = new S3rverClass({ address: '127.0.0.1', port, directory, silent: true });
    const address = await server.run();
    running = server;
    return address.port;
  };
  const port = await launch(0);
  const endpoint = `http://127.0.0.1:${port}`;
  // Synchronously: an 'exit' handler cannot wait for a promise.
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  // Buckets are made with a signed request like any client's.
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY },
  });
  return {
    endpoint,
    async createBucket() {
      const bucket = `sy-test-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return bucket;
    },
    env(bucket, prefix) {
      return {
        STORAGE_URL: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_REGION: 'us-east-1',
        S3_FORCE_PATH_STYLE: '1',
        ...CREDENTIALS,
      };
    },
    async suspend() {
      const server = running;
      running = undefined;
      if (!server) return;
      const http = (server as unknown as { httpServer: Server }).httpServer;
      const closed = server.close();
      http.closeAllConnections();
      await closed;
    },
    async resume() {
      if (!running) await launch(port);
    },
  };
}
