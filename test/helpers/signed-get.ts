import { request } from './http';
import { checkAgainstOpenApi } from './openapi-check';
import { signRequest } from './signer';

export interface ApiKey {
  keyId: string;
  secret: string;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  /** The raw bytes (exports). */
  bytes: Buffer;
}

/**
 * A signed GET against the test daemon, as a merchant back end sends it (signed with the
 * SPEC-written signer). `headers` override or add to the signed ones; `timestamp` is used verbatim.
 * Without one, the signer never repeats a signature, so two identical reads in one second are no replay.
 */
export async function signedGet(
  baseUrl: string,
  key: ApiKey,
  target: string,
  opts: { headers?: Record<string, string>; timestamp?: number | string; omit?: string[] } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...signRequest({ ...key, method: 'GET', target, timestamp: opts.timestamp }), ...opts.headers };
  for (const h of opts.omit ?? []) delete headers[h];
  return send(baseUrl + target, headers);
}

export async function send(url: string, headers: Record<string, string>): Promise<ApiResponse> {
  const res = await request(url, { headers });
  const bytes = res.bytes;
  const target = new URL(url);
  checkAgainstOpenApi('GET', target.pathname + target.search, res.status, res.headers.get('content-type') ?? undefined, bytes.toString('utf8'));
  let body: unknown = null;
  if ((res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(bytes.toString('utf8'));
  return { status: res.status, headers: res.headers, body, bytes };
}
