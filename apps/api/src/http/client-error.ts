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

export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The client is gone, or an answer is already under way on this socket: nothing can be said.
    const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress) {
      socket.destroy();
      return;
    }
    const status = statusOf(error.code);
    logger.info({ code: error.code, status }, 'refused by the HTTP parser');
    const body = JSON.stringify(envelopeOf({ status, message: ERROR_MESSAGES[status] }));
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
