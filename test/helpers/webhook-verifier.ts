/**
 * An independent check of webhook deliveries, written from SPEC "Events" alone. It imports nothing
 * from src/, so it catches a sender that drifts from the specification.
 *
 *   headers: X-Event-Id, X-Event-Type, X-Timestamp (decimal Unix seconds), X-Signature,
 *            Content-Type: application/json, User-Agent: Service-Webhooks/1.0
 *   body:    {event_id, type, created_at (RFC 3339 UTC), data}
 *   X-Signature = "sha256=" + lower-case hex HMAC-SHA256(secret bytes as given, X-Timestamp + "." + raw body)
 */
import * as crypto from 'node:crypto';

export interface ReceivedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export function expectedSignature(secret: string, timestamp: string, body: Buffer | string): string {
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const mac = crypto.createHmac('sha256', Buffer.from(secret, 'utf8'));
  return 'sha256=' + mac.update(Buffer.concat([Buffer.from(timestamp + '.', 'utf8'), raw])).digest('hex');
}

/** True when `signature` is exactly the expected value (constant-time compare). */
export function signatureValid(secret: string, timestamp: string, body: Buffer | string, signature: string): boolean {
  const want = Buffer.from(expectedSignature(secret, timestamp, body), 'utf8');
  const got = Buffer.from(signature, 'utf8');
  return want.length === got.length && crypto.timingSafeEqual(want, got);
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? undefined : v);

/**
 * Every problem with a received delivery, as sentences (empty when it is a correct, signed
 * delivery). `nowSeconds` with `toleranceSeconds` also checks the timestamp's freshness.
 */
export function deliveryProblems(req: ReceivedRequest, secret: string, opts: { nowSeconds?: number; toleranceSeconds?: number } = {}): string[] {
  const problems: string[] = [];
  const h = (name: string) => one(req.headers[name.toLowerCase()]);
  if (req.method !== 'POST') problems.push(`method is ${req.method}, not POST`);
  if (h('Content-Type') !== 'application/json') problems.push(`Content-Type is ${h('Content-Type')}`);
  if (h('User-Agent') !== 'Service-Webhooks/1.0') problems.push(`User-Agent is ${h('User-Agent')}`);
  const timestamp = h('X-Timestamp');
  const signature = h('X-Signature');
  if (timestamp === undefined || !/^\d+$/.test(timestamp)) problems.push(`X-Timestamp is ${timestamp}`);
  if (signature === undefined || !/^sha256=[0-9a-f]{64}$/.test(signature)) problems.push(`X-Signature is malformed`);
  else if (timestamp !== undefined && !signatureValid(secret, timestamp, req.body, signature)) problems.push('X-Signature does not verify');
  if (timestamp !== undefined && opts.nowSeconds !== undefined && Math.abs(opts.nowSeconds - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) {
    problems.push(`X-Timestamp ${timestamp} is outside the tolerance`);
  }
  let body: { event_id?: unknown; type?: unknown; created_at?: unknown; data?: unknown } = {};
  try {
    body = JSON.parse(req.body.toString('utf8')) as typeof body;
  } catch {
    problems.push('the body is not JSON');
  }
  if (typeof body.event_id !== 'string' || !/^[0-9a-f-]{36}$/.test(body.event_id)) problems.push('body.event_id is not a uuid');
  if (typeof body.type !== 'string') problems.push('body.type is missing');
  if (typeof body.created_at !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(body.created_at))
    problems.push('body.created_at is not RFC 3339 UTC');
  if (typeof body.data !== 'object' || body.data === null || Array.isArray(body.data)) problems.push('body.data is not an object');
  if (h('X-Event-Id') !== body.event_id) problems.push('X-Event-Id differs from body.event_id');
  if (h('X-Event-Type') !== body.type) problems.push('X-Event-Type differs from body.type');
  return problems;
}
