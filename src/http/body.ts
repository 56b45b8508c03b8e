import type { IncomingMessage } from 'node:http';
import { ApiError, validationError } from '../shared/errors';
import { checkTextInput } from './text-input';

export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (): ApiError =>
  new ApiError(413, 'payload_too_large', 'request body is larger than 1 MiB', { limit_bytes: MAX_BODY_BYTES });

/**
 * Reads the raw body, refusing more than MAX_BODY_BYTES: a declared Content-Length over the limit is
 * refused before reading; a stream that grows past it is abandoned at that point.
 */
export function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  if (declared === '0' || (declared === undefined && req.headers['transfer-encoding'] === undefined)) {
    return Promise.resolve(Buffer.alloc(0));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: Error | null, buf?: Buffer) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (err) {
        req.pause();
        reject(err);
      } else resolve(buf!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    const onError = (e: Error) => finish(e);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** A JSON object body: the Content-Type must be JSON and the value an object. Empty → {}. */
export function parseJsonObject(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  if (raw.length === 0) return {};
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mime !== 'application/json') {
    throw validationError('Content-Type', 'a request body must be sent as Content-Type: application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw validationError('body', 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError('body', 'the body must be a JSON object');
  }
  checkTextInput(value as Record<string, unknown>);
  return value as Record<string, unknown>;
}
