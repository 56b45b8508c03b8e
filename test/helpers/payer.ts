/** A connection per request (see ApiClient): a kept-alive one may be closed for idleness as it is reused. */
const CLOSE = { connection: 'close' };

/** A payer's browser as far as HTTP goes: unsigned requests to the public payment page. */
export class Payer {
  constructor(private readonly baseUrl: string) {}

  async page(id: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${this.baseUrl}/pay/${id}`, { headers: { ...CLOSE, ...headers } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  async status(id: string) {
    const res = await fetch(`${this.baseUrl}/pay/${id}/status`, { headers: CLOSE });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }

  async choose(id: string, body: unknown) {
    const res = await fetch(`${this.baseUrl}/pay/${id}/coin`, {
      method: 'POST',
      headers: { ...CLOSE, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }

  /** Polls the public status until `done` holds (the status is cached for up to a second). */
  async statusUntil(id: string, done: (body: any) => boolean, timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.status(id);
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`status never matched; last: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
