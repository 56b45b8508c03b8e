import { httpRequest } from '../../src/shared/http-request';

export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

/**
 * One request as the test clients send it: headers merged as fetch would merge them (names in any
 * case), the answer's headers as a fetch Headers, a connection per request (`connection: close`: a
 * kept-alive one may be closed for idleness by the daemon just as it is reused). node:http, not
 * fetch: a poll's request costs a third of the CPU (the test and its daemon share two cores).
 */
export async function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const merged = new Headers(opts.headers);
  if (!merged.has('connection')) merged.set('connection', 'close');
  const res = await httpRequest(url, { method: opts.method, headers: Object.fromEntries(merged), body: opts.body });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.append(name, value);
  }
  return { status: res.status, headers, bytes: res.bytes, text: res.text };
}
