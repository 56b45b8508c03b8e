import test from 'ava';
import { freshSourceIp, SignedClient } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';

/**
 * PRODUCT §3 `trust_proxy`: off (0), the client IP is the connection's address and X-Forwarded-For
 * is ignored (a client cannot choose its IP); N hops, it is the N-th X-Forwarded-For address from
 * the right, the one the operator's outermost proxy appended (`true` is 1). Whatever a client
 * writes to the left of it counts for nothing. The key's IP whitelist and the per-IP block both see
 * that address; the block counts an IPv6 client by its /64.
 */

const TARGET = '/v1/account/api-keys';
/** What nginx sends with `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`: the client's header, then the address nginx saw. */
const viaProxy = (clientWrote: string | null, seen: string) => ({ 'X-Forwarded-For': clientWrote === null ? seen : `${clientWrote}, ${seen}` });

test('trust_proxy false: the whitelist ignores X-Forwarded-For', async (t) => {
  const d = await startTestDaemon({ trust_proxy: false });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon, { ip: ['203.0.113.7'] });
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();
  const res = await client.get(TARGET, { from, headers: viaProxy(null, '203.0.113.7') });
  t.is(res.status, 403, res.text);
  t.is(res.json.error.details.ip, from);
});

for (const hops of [true, 1, 2] as const) {
  test(`trust_proxy ${hops}: the whitelist sees the address the proxy appended, not one the client wrote`, async (t) => {
    const d = await startTestDaemon({ trust_proxy: hops });
    t.teardown(() => d.stop());
    const m = await merchantWithKey(d.daemon, { ip: ['203.0.113.7'] });
    const client = new SignedClient(d.url, m.keyId, m.secret);
    const from = freshSourceIp();
    // With two hops the inner proxy appends the outer proxy's address after the client's.
    const inner = (h: Record<string, string>) => (hops === 2 ? { 'X-Forwarded-For': `${h['X-Forwarded-For']}, 10.0.0.2` } : h);

    const allowed = await client.get(TARGET, { from, headers: inner(viaProxy(null, '203.0.113.7')) });
    t.is(allowed.status, 200, allowed.text);
    const spoofed = await client.get(TARGET, { from, headers: inner(viaProxy('203.0.113.7', '198.51.100.9')) });
    t.is(spoofed.status, 403, spoofed.text);
    t.is(spoofed.json.error.code, 'auth.ip_not_allowed');
    t.is(spoofed.json.error.details.ip, '198.51.100.9');
  });
}

test('trust_proxy 1: refused authentications block the client the proxy saw, never the address a client wrote', async (t) => {
  const d = await startTestDaemon({ trust_proxy: 1 });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const proxy = freshSourceIp();
  const victim = '198.51.100.67';
  // The attacker writes the victim's address on the left of every failing request.
  const attacker = viaProxy(victim, '198.51.100.66');
  for (let i = 0; i < 25; i++) await client.get(TARGET, { from: proxy, headers: attacker, secret: 'n'.repeat(43) });
  const blocked = await client.get(TARGET, { from: proxy, headers: attacker });
  t.is(blocked.status, 429);
  t.is(blocked.json.error.details.scope, 'ip');
  const fromVictim = await client.get(TARGET, { from: proxy, headers: viaProxy(null, victim) });
  t.is(fromVictim.status, 200, fromVictim.text);
});

test('an IPv6 client is blocked by its /64: other addresses of the same /64 are refused, another /64 is not', async (t) => {
  const d = await startTestDaemon({ trust_proxy: 1 });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const proxy = freshSourceIp();
  // 20 refusals, each from a different address of one /64 (the written forms differ too).
  for (let i = 0; i < 20; i++) {
    const res = await client.get(TARGET, { from: proxy, headers: viaProxy(null, `2001:db8:0:7:${(i + 1).toString(16)}::1`), secret: 'v'.repeat(43) });
    t.is(res.status, 401, res.text);
  }
  const sameNet = await client.get(TARGET, { from: proxy, headers: viaProxy(null, '2001:0db8:0000:0007:ffff:ffff:ffff:fffe') });
  t.is(sameNet.status, 429, sameNet.text);
  t.is(sameNet.json.error.details.scope, 'ip');
  const otherNet = await client.get(TARGET, { from: proxy, headers: viaProxy(null, '2001:db8:0:8::1') });
  t.is(otherNet.status, 200, otherNet.text);
});
