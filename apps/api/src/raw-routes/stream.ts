// A raw route's answer body streamed out. Errors go through the error mapping (express's error
// handler -> sendError) only as long as no byte has been sent. Once headers are out, a failure can
// only end the connection, which the client sees as a broken download (never as a complete one).
import type { Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { AppDeps } from '../trpc/service-deps.js';
import { loggerOf } from '../lib/request-scope.js';

/** Pipes a body out with backpressure; on failure after the headers, cuts the connection. */
export async function streamAnswer(deps: AppDeps, req: Request, res: Response, body: NodeJS.ReadableStream | IncomingMessage): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (error) {
    res.destroy();
    loggerOf(req, deps.logger).warn({ err: error, path: req.path, client_gone: req.destroyed }, 'download ended before its last byte');
  }
}
