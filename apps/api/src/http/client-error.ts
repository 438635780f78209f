// Requests Node's HTTP parser refuses before express sees them (no route, no request object): a
// malformed request line or header, a URL plus headers over --max-http-header-size (16 KB), a
// request not received within the server's timeouts. Node's default answer is a bare status line;
// here it is the envelope, as JSON, like every other error, and the connection is closed. A request
// whose body the parser refuses once its handler runs (a malformed chunk) gets the same answer,
// through its own response.
import type { Server } from 'node:http';
import type { RequestHandler } from 'express';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ERROR_MESSAGES, type ErrorStatus } from '@switchyard/schema';
import { envelopeOf, Invalid } from '../lib/errors.js';

const REASONS: Partial<Record<ErrorStatus, string>> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function statusOf(code: string | undefined): ErrorStatus {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/** The answer a socket is still sending (keep-alive: the previous request's), if any. */
type Outgoing = {
  writableFinished: boolean;
  headersSent: boolean;
  req?: { complete: boolean };
  once(event: 'finish' | 'close', listener: () => void): unknown;
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string): unknown;
};

export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = statusOf(error.code);
    logger.info({ code: error.code, status }, 'refused by the HTTP parser');
    const body = JSON.stringify(envelopeOf({ status, message: ERROR_MESSAGES[status] }));
    const answer = () => {
      if (!socket.writable) return socket.destroy();
      socket.end(
        `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    // On a keep-alive connection the client may send its next request as soon as it has the last
    // byte of the previous answer, before that answer has finished on this side (a download's
    // stream ends after its last chunk is out). Answer after it, never inside it.
    const current = (socket as Duplex & { _httpMessage?: Outgoing | null })._httpMessage;
    if (current?.req && !current.req.complete) {
      // The error is about the body of the request being answered. Its body ended early (the client
      // went away mid-upload): nobody is left to answer, and its handler must see the request close.
      if (error.code === 'HPE_INVALID_EOF_STATE' || current.headersSent) {
        socket.destroy();
        return;
      }
      // A malformed body (a bad chunk size or chunk end): the envelope, through the request's own
      // response. Once it is out the connection closes, and the handler, still reading the body,
      // sees the request end and finds its answer already sent.
      current.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
      current.end(body);
      return;
    }
    if (current && !current.writableFinished) {
      let done = false;
      const after = () => {
        if (done) return;
        done = true;
        if (current.writableFinished) answer();
        else socket.destroy();
      };
      current.once('finish', after);
      current.once('close', after);
      return;
    }
    answer();
  });
}

/**
 * An HTTP/1.1 request without a Host header is malformed (RFC 9112, section 3.2). Node answers it
 * with a bare 400 unless the server is made with `requireHostHeader: false`, as this one is: this
 * middleware answers it instead, with the envelope, after the request log and metrics saw it.
 */
export const requireHost: RequestHandler = (req, _res, next) => {
  const http11 = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
  if (http11 && req.headers.host === undefined) return next(new Invalid('the request has no Host header', { reason: 'no Host header' }));
  next();
};
