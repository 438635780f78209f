// A floor server, run as its own process (as the real server is): answers every request with one
// fixed body, the real scenario's answer byte for byte, with the same Content-Type.
//   node floor.js <node|express> <port> <body file> <content type>
// `node` is a bare node:http server; `express` is an express app with one route. Its express is the
// very one @switchyard/api runs on (resolved through that package, so the bench adds no copy).
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';

interface ExpressResponse {
  status(code: number): ExpressResponse;
  type(value: string): ExpressResponse;
  send(body: Buffer): void;
}
interface ExpressApp {
  all(path: string | RegExp, handler: (req: unknown, res: ExpressResponse) => void): void;
  listen(port: number, host: string, callback: () => void): http.Server;
  disable(setting: string): void;
  set(setting: string, value: unknown): void;
}

const [mode, portText, bodyFile, contentType] = process.argv.slice(2);
if ((mode !== 'node' && mode !== 'express') || !portText || !bodyFile || !contentType) {
  console.error('usage: floor.js <node|express> <port> <body file> <content type>');
  process.exit(2);
}
const port = Number(portText);
const body = fs.readFileSync(bodyFile);
const ready = () => process.send?.('ready') ?? console.log('ready');

if (mode === 'node') {
  const server = http.createServer((req, res) => {
    // Drain any request body (feedback and recording scenarios POST one) before answering.
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', ready);
} else {
  const requireFromApi = createRequire(import.meta.resolve('@switchyard/api'));
  const express = requireFromApi('express') as () => ExpressApp;
  const app = express();
  // The same two settings as apps/api/src/app.ts.
  app.disable('x-powered-by');
  app.set('etag', false);
  app.all(/.*/, (req, res) => {
    (req as NodeJS.ReadableStream).resume();
    (req as NodeJS.ReadableStream).on('end', () => res.status(200).type(contentType).send(body));
  });
  const server = app.listen(port, '127.0.0.1', ready);
  server.keepAliveTimeout = 65_000;
}
