import { request } from './http';

/** A payer's browser as far as HTTP goes: unsigned requests to the public payment page. */
export class Payer {
  constructor(private readonly baseUrl: string) {}

  async page(id: string, headers: Record<string, string> = {}) {
    const res = await request(`${this.baseUrl}/pay/${id}`, { headers });
    return { status: res.status, headers: res.headers, text: res.text };
  }

  async status(id: string) {
    const res = await request(`${this.baseUrl}/pay/${id}/status`);
    return { status: res.status, headers: res.headers, body: JSON.parse(res.text) as any };
  }

  async choose(id: string, body: unknown) {
    const res = await request(`${this.baseUrl}/pay/${id}/coin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: JSON.parse(res.text) as any };
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
