import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { API_VERSION } from './app';

/** What Node refuses before Koa sees the request, answered as SPEC's envelope. */
function answerFor(code: string | undefined): { status: number; reason: string; body: object } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      body: { code: 'validation_error', message: 'the request headers are larger than 16 KiB', details: { field: 'headers' } },
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', body: { code: 'timeout', message: 'the request was not received in time', details: {} } };
  }
  return { status: 400, reason: 'Bad Request', body: { code: 'validation_error', message: 'the request is not valid HTTP', details: { field: 'request' } } };
}

/**
 * Node answers malformed HTTP, oversized headers and slow requests itself, with a bare status line;
 * this gives those answers the envelope and `X-API-Version` every other failure has.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, reason, body } = answerFor(err.code);
    const json = JSON.stringify({ error: body });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nX-API-Version: ${API_VERSION}\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  });
}
