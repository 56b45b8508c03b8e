/** Answers larger than this are not price lists: refuse rather than buffer them. */
const MAX_BODY_BYTES = 1 << 20;

export class SourceHttpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceHttpError';
  }
}

/** One signal for a whole source fetch: its timeout, and the caller's signal (job shutdown) when given. */
export const fetchSignal = (timeoutMs: number, outer?: AbortSignal): AbortSignal =>
  outer ? AbortSignal.any([AbortSignal.timeout(timeoutMs), outer]) : AbortSignal.timeout(timeoutMs);

/** `base` from the config, with or without a trailing slash, joined with a path and a raw query. */
export function sourceUrl(base: string, path: string, query: string): string {
  return `${base.replace(/\/+$/, '')}${path}?${query}`;
}

/**
 * GET a JSON document. A status outside 2xx and `acceptStatuses` fails, as does a body that is not
 * JSON or is too large.
 */
export async function getJson(url: string, signal: AbortSignal, acceptStatuses: readonly number[] = []): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok && !acceptStatuses.includes(res.status)) {
    await res.body?.cancel();
    throw new SourceHttpError(`HTTP ${res.status}`);
  }
  const text = await readLimited(res);
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new SourceHttpError(`HTTP ${res.status}: answer is not JSON`);
  }
}

async function readLimited(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new SourceHttpError('answer too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An own property of a parsed JSON object (never one inherited from Object.prototype). */
export const own = (obj: Record<string, unknown>, key: string): unknown => (Object.hasOwn(obj, key) ? obj[key] : undefined);
