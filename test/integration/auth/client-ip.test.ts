import test from 'ava';
import { freshSourceIp, SignedClient } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';

/**
 * PRODUCT §3 `trust_proxy`: off, the client IP is the connection's address and X-Forwarded-For is
 * ignored (a client cannot choose its IP); on, behind the operator's proxy, it is the header's first
 * hop. The key's IP whitelist and the per-IP block both see that address.
 */

const TARGET = '/v1/account/api-keys';

for (const trustProxy of [false, true]) {
  test(`trust_proxy ${trustProxy}: the whitelist ${trustProxy ? 'sees the first X-Forwarded-For hop' : 'ignores X-Forwarded-For'}`, async (t) => {
    const d = await startTestDaemon({ trust_proxy: trustProxy });
    t.teardown(() => d.stop());
    const m = await merchantWithKey(d.daemon, { ip: ['203.0.113.7'] });
    const client = new SignedClient(d.url, m.keyId, m.secret);
    const from = freshSourceIp();
    const forwarded = { 'X-Forwarded-For': '203.0.113.7, 10.0.0.1' };

    const viaProxy = await client.get(TARGET, { from, headers: forwarded });
    const direct = await client.get(TARGET, { from });
    t.is(direct.status, 403);
    t.is(direct.json.error.details.ip, from);
    if (trustProxy) {
      t.is(viaProxy.status, 200, viaProxy.text);
      const other = await client.get(TARGET, { from, headers: { 'X-Forwarded-For': '198.51.100.9' } });
      t.is(other.json.error.code, 'auth.ip_not_allowed');
      t.is(other.json.error.details.ip, '198.51.100.9');
    } else {
      t.is(viaProxy.status, 403, viaProxy.text);
      t.is(viaProxy.json.error.details.ip, from);
    }
  });
}

test('trust_proxy true: refused authentications block the forwarded client, not the proxy', async (t) => {
  const d = await startTestDaemon({ trust_proxy: true });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const proxy = freshSourceIp();
  const attacker = { 'X-Forwarded-For': '198.51.100.66' };
  for (let i = 0; i < 25; i++) await client.get(TARGET, { from: proxy, headers: attacker, secret: 'n'.repeat(43) });
  const blocked = await client.get(TARGET, { from: proxy, headers: attacker });
  t.is(blocked.status, 429);
  t.is(blocked.json.error.details.scope, 'ip');
  const someoneElse = await client.get(TARGET, { from: proxy, headers: { 'X-Forwarded-For': '198.51.100.67' } });
  t.is(someoneElse.status, 200, someoneElse.text);
});
