// Requests Node's HTTP parser refuses before express sees them (no route, no request object): a
// malformed request line or header, a URL plus headers over --max-http-header-size (16 KB), a
// request not received within the server's timeouts. Node's default answer is a bare status line;
// here it is the envelope, as JSON, like every other error, and the connection is closed.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ERROR_MESSAGES, type ErrorStatus } from '@switchyard/schema';
import { envelopeOf } from '../errors.js';

const REASONS: Partial<Record<ErrorStatus, string>> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function statusOf(code: string | undefined): ErrorStatus {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/** The answer a socket is still sending (keep-alive: the previous request's), if any. */
type Outgoing = { writableFinished: boolean; req?: { complete: boolean }; once(event: 'finish' | 'close', listener: () => void): unknown };

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
    // The error is about the request being answered (its body ended early: the client went away
    // mid-upload): nobody is left to answer, and its handler must see the request close.
    if (current?.req && !current.req.complete) {
      socket.destroy();
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
