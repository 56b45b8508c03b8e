/**
 * The static address API on a real local EVM chain (anvil) with the wallet's own addresses:
 * creation, 50 parallel creations, the list's filters and search, archive by hand, restore refused
 * while another address is active, and another account's id.
 */
import test from 'ava';
import { killAllAnvils } from '../../helpers/anvil';
import { SignedClient } from '../../helpers/api-client';
import { merchantWithKey } from '../../helpers/daemon';
import { startEvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllAnvils);

test('on anvil: wallet addresses per customer and coin, 50 parallel creations make one, every filter and search of the list, archive and a refused restore, another account\'s id is 404', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const post = async (body: Record<string, unknown>) => f.api.post('/v1/addresses', body);
  const a = (await post({ customer_id: 'cust-a', coin_id: f.coin.ETH, label: 'Gold member' })).body;
  const u = (await post({ customer_id: 'cust-a', currency: 'USDT' })).body;
  const b = (await post({ customer_id: 'cust-b', coin_id: f.coin.ETH })).body;
  for (const x of [a, u, b]) t.regex(x.address, /^0x[0-9a-fA-F]{40}$/);
  t.is(new Set([a.address, u.address, b.address]).size, 3);
  t.like(u, { coin_id: f.coin.USDT, ticker: 'USDT', status: 'active' });

  const answers = await Promise.all(Array.from({ length: 50 }, () => post({ customer_id: 'cust-p', coin_id: f.coin.ETH })));
  const made = answers.filter((r) => r.status === 201);
  t.is(made.length, 1);
  for (const r of answers.filter((x) => x.status !== 201)) t.deepEqual([r.status, r.body.error.details], [409, { active_address_id: made[0]!.body.id }]);
  const p = made[0]!.body;

  const ids = async (q: string) => {
    const res = await f.api.get(`/v1/addresses?${q}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.items.map((x: { id: string }) => x.id);
  };
  t.deepEqual(await ids(''), [p.id, b.id, u.id, a.id]);
  t.deepEqual(await ids(`coin_id=${f.coin.USDT}`), [u.id]);
  t.deepEqual(await ids('customer_id=cust-a'), [u.id, a.id]);
  t.deepEqual(await ids(`search=${a.address.slice(9, 21)}`), [a.id]);
  t.deepEqual(await ids(`search=${a.address.slice(0, 12)}`), [a.id]);
  t.deepEqual(await ids(`search=${encodeURIComponent('ld mem')}`), [a.id]);
  t.deepEqual(await ids('search=ust-a'), [u.id, a.id]);

  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`, {})).status, 200);
  t.deepEqual(await ids('status=archived'), [a.id]);
  t.deepEqual(await ids('status=active&customer_id=cust-a'), [u.id]);
  const archived = await f.events('static_address.archived');
  t.deepEqual(archived.map((e) => [e.object_id, e.data.reason]), [[a.id, 'manual']]);
  const again = (await post({ customer_id: 'cust-a', coin_id: f.coin.ETH })).body;
  t.not(again.address, a.address);
  const refused = await f.api.post(`/v1/addresses/${a.id}/restore`, {});
  t.deepEqual([refused.status, refused.body.error.code, refused.body.error.details], [409, 'conflict', { active_address_id: again.id }]);
  t.like((await f.api.get(`/v1/addresses/${a.id}`)).body, { status: 'archived' });

  const other = await merchantWithKey(f.td.daemon);
  const stranger = new SignedClient(f.td.url, other.keyId, other.secret);
  for (const res of [await stranger.get(`/v1/addresses/${b.id}`), await stranger.post(`/v1/addresses/${b.id}/archive`, {})]) {
    t.is(res.status, 404);
    t.is(res.json.error.code, 'not_found');
  }
  t.like((await f.api.get(`/v1/addresses/${b.id}`)).body, { status: 'active' });
  t.deepEqual((await stranger.get('/v1/addresses')).json.items, []);
});
