import test from 'ava';
import { call, freshSourceIp, type ApiResponse } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { signRequest } from '../../helpers/signer';

/**
 * Issue 14 §1: one key cannot take the API down for everyone. Requests refused by the key's rate
 * limit or IP whitelist leave nothing in the replay guard, a key that fills its share is refused
 * alone (429 scope key), and every other account is still answered. The daemon runs with a small
 * share so that the test can reach it.
 */

const SHARE = 100;
const FLOOD = 1000;

/** `total` signed GETs of distinct targets for one key, 16 in flight; the statuses seen, counted. */
async function flood(url: string, key: { keyId: string; secret: string }, from: string, total: number, tag: string): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const target = `/v1/currencies?flood=${tag}-${i}`;
      const res: ApiResponse = await call(url, target, { from, headers: signRequest({ keyId: key.keyId, secret: key.secret, method: 'GET', target }) });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return statuses;
}

test('one key flooding over its rate limit, from outside its whitelist and up to its share is refused alone; another account is answered and memory stays flat', async (t) => {
  const d = await startTestDaemon({}, { replayKeyShare: SHARE });
  t.teardown(() => d.stop());
  const inside = freshSourceIp();
  const slow = await merchantWithKey(d.daemon, { ip: [inside], rateLimit: 10 });
  const other = await merchantWithKey(d.daemon);
  const otherFrom = freshSourceIp();
  const otherGet = async () => {
    const target = `/v1/currencies?other=${Math.random()}`;
    return call(d.url, target, { from: otherFrom, headers: signRequest({ keyId: other.keyId, secret: other.secret, method: 'GET', target }) });
  };
  t.is((await otherGet()).status, 200);
  const rss0 = process.memoryUsage().rss;

  const outside = await flood(d.url, slow, freshSourceIp(), FLOOD, 'outside');
  t.deepEqual([...outside], [[403, FLOOD]]);
  const overRate = await flood(d.url, slow, inside, FLOOD, 'over-rate');
  // Ten tokens, and one more for every 6 s the flood lasts.
  t.deepEqual([...overRate.keys()].sort(), [200, 429]);
  t.true(overRate.get(200)! <= 15, `${overRate.get(200)} answered`);

  // A key with a generous rate limit fills its share: then it alone is refused.
  const busy = await merchantWithKey(d.daemon, { rateLimit: 100_000 });
  const busyFrom = freshSourceIp();
  const shared = await flood(d.url, busy, busyFrom, SHARE + 50, 'share');
  t.is(shared.get(200), SHARE);
  t.is(shared.get(429), 50);
  const target = '/v1/currencies?after-share';
  const refused = await call(d.url, target, { from: busyFrom, headers: signRequest({ keyId: busy.keyId, secret: busy.secret, method: 'GET', target }) });
  t.is(refused.status, 429, refused.text);
  t.like(refused.json.error, { code: 'rate_limited', details: { scope: 'key' } });
  t.true(Number(refused.headers['retry-after']) >= 1);

  const res = await otherGet();
  t.is(res.status, 200, res.text);
  const grownMiB = (process.memoryUsage().rss - rss0) / 1024 / 1024;
  t.true(grownMiB < 64, `RSS grew by ${grownMiB.toFixed(1)} MiB`);
});
