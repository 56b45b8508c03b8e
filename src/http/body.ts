import type { IncomingMessage } from 'node:http';
import { ApiError, validationError } from '../shared/errors';
import { checkTextInput } from './text-input';

export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting of arrays and objects a JSON body may have (a deep 1 MiB nest stalls the event loop: docs/benchmarks.md, body). */
export const MAX_JSON_DEPTH = 32;

const tooLarge = (): ApiError => new ApiError(413, 'payload_too_large', 'request body is larger than 1 MiB', { limit_bytes: MAX_BODY_BYTES });

/** Whether the request announces a body (a Content-Length above 0, or a chunked one); refuses a declared one over the limit. */
export function announcesBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  return declared === undefined ? req.headers['transfer-encoding'] !== undefined : declared !== '0';
}

/**
 * Reads the raw body, refusing more than MAX_BODY_BYTES: a declared Content-Length over the limit is
 * refused before reading; a stream that grows past it is abandoned at that point.
 */
export function readRawBody(req: IncomingMessage): Promise<Buffer> {
  try {
    if (!announcesBody(req)) return Promise.resolve(Buffer.alloc(0));
  } catch (err) {
    return Promise.reject(err);
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
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    throw validationError('body', `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** One pass over the bytes, outside strings, counting open brackets and braces; stops at the first level past `max`. */
function nestsDeeperThan(raw: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) depth--;
  }
  return false;
}
