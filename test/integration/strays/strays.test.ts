/**
 * Money sent where it was not asked for (PRODUCT §17), on two real local EVM chains (anvil twice):
 * an invoice paid on the other chain, or in another configured token, is a stray: recorded, never
 * credited on its own, `stray.detected` sent; the merchant credits it once as a deposit. A
 * reorganisation reverts a stray (a credited one taken back); an archived static address's stray
 * is found by the slow scan; another account sees none of it.
 */
import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { unsweptCredited } from '../../../src/payouts/sweep-groups';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import { AccountEntity, SecurityLogEntity } from '../../../src/db/entities/team';
import { LedgerEntryEntity } from '../../../src/db/entities/money';
import { NETWORK_BOOK } from '../../../src/ledger/ledger';
import { Amount } from '../../../src/shared/amount';
import { deployTestToken, killAllAnvils, payFromAnvil, startAnvil, type TestAnvil } from '../../helpers/anvil';
import { SignedClient } from '../../helpers/api-client';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, OtpSource, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { merchantSide, type MerchantSide } from '../../helpers/merchant-side';
import { CONFIRMATIONS, FAST_WATCH, RATES } from '../chains/evm/evm-fixture';
import { waitUntil } from '../../helpers/poll';

test.after.always(killAllAnvils);

/** `coinkeep ledger reconcile --json`: its exit code, stderr and report. */
async function reconcile(td: TestDaemon) {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), '--json', 'ledger', 'reconcile'], { timeoutMs: 60_000 });
  return { ...r, json: JSON.parse(r.stdout) };
}
const line = (report: { coins: Array<{ ticker: string; chain_id: string }> }, chainId: string, ticker: string) =>
  report.coins.find((x) => x.ticker === ticker && x.chain_id === chainId);

/** No sweep moves the payments on (nor mines blocks of its own). */
const NO_SWEEPS = { min: { ETH: '1000000', USDT: '1000000000', USDC: '1000000000' } };
const NO_POL_SWEEPS = { min: { POL: '1000000', USDT: '1000000000' } };

interface TwoChains {
  td: TestDaemon;
  eth: TestAnvil;
  usdc: string;
  pol: TestAnvil;
  m: MerchantSide;
  coin: { ethUsdt: string; ethUsdc: string; polUsdt: string; ethEth: string };
}

/** Polls with a deadline of 15,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> => waitUntil(what, ok, timeoutMs);

async function startTwoChains(overrides: Record<string, unknown> = {}, polSweep: Record<string, unknown> = NO_POL_SWEEPS): Promise<TwoChains> {
  const eth = await startAnvil();
  const usdc = await deployTestToken(eth.node);
  const pol = await startAnvil({ chainId: 137 });
  const td = await startTestDaemon({
    chains: [
      anvilChainEntry(eth.node.rpcUrl, eth.usdt, {
        confirmations: CONFIRMATIONS,
        options: FAST_WATCH,
        tokens: [
          { ticker: 'USDT', contract: eth.usdt, decimals: 6 },
          { ticker: 'USDC', contract: usdc, decimals: 6 },
        ],
        sweep: NO_SWEEPS,
      }),
      anvilChainEntry(pol.node.rpcUrl, pol.usdt, {
        id: 'polygon',
        chain_id: 137,
        native: { ticker: 'POL', decimals: 18 },
        confirmations: CONFIRMATIONS,
        options: FAST_WATCH,
        sweep: polSweep,
      }),
    ],
    rates: {
      sources: [
        {
          kind: 'fixed',
          rates: { ...(RATES.sources[0]!.rates as Record<string, unknown>), USDC: { USD: '1', EUR: '0.93' }, POL: { USD: '0.5', EUR: '0.45' } },
        },
      ],
    },
    ...overrides,
  });
  const m = await merchantSide(td);
  await until('both chains watched', () => td.daemon.chains.status().every((c) => c.scanned_height !== null));
  return {
    td,
    eth,
    usdc,
    pol,
    m,
    coin: {
      ethUsdt: coinId('ethereum', eth.usdt),
      ethUsdc: coinId('ethereum', usdc),
      polUsdt: coinId('polygon', pol.usdt),
      ethEth: coinId('ethereum', 'native'),
    },
  };
}

const stop = (c: TwoChains) => async () => {
  await c.td.stop();
};

/** Waits until the chain's scanner reached its node's tip. */
async function scanned(c: TwoChains, chainId: 'ethereum' | 'polygon'): Promise<void> {
  const node = chainId === 'ethereum' ? c.eth.node : c.pol.node;
  const tip = await node.blockNumber();
  await until(`${chainId} scanned`, () => (c.td.daemon.chains.status().find((s) => s.chain_id === chainId)!.scanned_height ?? -1) >= tip);
}

async function strays(c: TwoChains, query = ''): Promise<any[]> {
  const res = await c.m.api.get(`/v1/strays${query}`);
  if (res.status !== 200) throw new Error(`GET /v1/strays${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items;
}

async function strayWhen(c: TwoChains, id: string, ok: (s: any) => boolean, what: string): Promise<any> {
  let last: any;
  await until(what, async () => ok((last = (await c.m.api.get(`/v1/strays/${id}`)).body)));
  return last;
}

test('an invoice paid on the other EVM chain is a stray: not credited, the invoice unchanged, stray.detected once; credited once on request, a second credit is 409 and changes nothing', async (t) => {
  const c = await startTwoChains();
  t.teardown(stop(c));
  await c.m.setAccount({ platform_fee_percent: '1' });
  const inv = await c.m.createInvoice({ amount: '4', currency: 'USDT', coin_id: c.coin.ethUsdt });
  t.is(inv.network, 'ethereum');

  // The same address, the right token, the wrong network.
  const txid = await payFromAnvil(c.pol.node, c.pol.usdt, inv.address, '4', 6);
  await scanned(c, 'polygon');
  await until('the stray listed', async () => (await strays(c)).length === 1);
  const [stray] = await strays(c);
  t.like(stray, {
    coin_id: c.coin.polUsdt,
    ticker: 'USDT',
    network: 'polygon',
    amount: '4',
    txid,
    to_address: inv.address,
    invoice_id: inv.id,
    address_id: null,
    status: 'open',
  });
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });

  // Not confirmed yet: 409, nothing changes.
  const early = await c.m.api.post(`/v1/strays/${stray.id}/credit`, {});
  t.is(early.status, 409);
  t.is(early.body.error.code, 'conflict');
  t.is(early.body.error.details.reason, 'stray_not_confirmed');
  t.is((await c.m.api.get(`/v1/strays/${stray.id}`)).body.status, 'open');

  await c.pol.node.mine(CONFIRMATIONS);
  await scanned(c, 'polygon');
  // Confirmed like any transfer, still not credited on its own.
  const [transfer] = await c.td.daemon.store.read.query("SELECT status, purpose FROM chain_transfers WHERE txid = ? AND chain_id = 'polygon'", [txid]);
  t.like(transfer, { status: 'confirmed', purpose: 'stray' });
  t.is(await c.m.available(c.coin.polUsdt), '0');
  t.is(await c.m.available(c.coin.ethUsdt), '0');
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });
  t.is((await c.m.transactions(`invoice_id=${inv.id}`)).length, 0);
  // Reconcile counts the open stray's coins at the wallet address as not credited yet: clean.
  const open = await reconcile(c.td);
  t.is(open.code, 0, open.stderr);
  t.like(line(open.json, 'polygon', 'USDT'), { uncredited_in: '4', status: 'ok' });
  // Nothing to sweep before it is credited.
  const polUsdt = { id: c.coin.polUsdt, decimals: 6 };
  t.deepEqual(await unsweptCredited(c.td.daemon.store.read, 'polygon', c.m.accountId, polUsdt), []);
  const detected = await c.m.events('stray.detected');
  t.is(detected.length, 1);
  t.like(detected[0]!.data.stray, { id: stray.id, status: 'open', network: 'polygon' });

  // Refunding needs withdraw; a refund the account cannot make yet (not verified) changes nothing.
  const denied = await c.m.api.post(`/v1/strays/${stray.id}/refund`, {});
  t.is(denied.status, 403);
  const { key } = await c.td.daemon.keys.create(
    c.m.accountId,
    { email: c.m.owner.email, otp: new OtpSource(c.m.owner.totp, { now: () => new Date() }).next() },
    { name: 'refunds', permissions: ['read', 'withdraw'], ip_whitelist: [], rate_limit_per_minute: 600, test: false },
  );
  const withdrawKey = new SignedClient(c.td.url, key.key_id, key.secret);
  const refundRes = await withdrawKey.post(`/v1/strays/${stray.id}/refund`, {}, { headers: { 'Content-Type': 'application/json' } });
  const refund = { status: refundRes.status, body: refundRes.json };
  t.is(refund.status, 403);
  t.like(refund.body.error, { code: 'kyb_required' });
  t.is((await c.m.api.get(`/v1/strays/${stray.id}`)).body.status, 'open');
  t.is(await c.m.available(c.coin.polUsdt), '0');

  const credited = await c.m.api.post(`/v1/strays/${stray.id}/credit`, {});
  t.is(credited.status, 200, JSON.stringify(credited.body));
  t.like(credited.body, { id: stray.id, status: 'credited' });
  t.is(await c.m.available(c.coin.polUsdt), '3.96');
  const deposits = (await c.m.transactions('type=deposit')).filter((x: any) => x.txid === txid);
  t.is(deposits.length, 1);
  t.like(deposits[0], { type: 'deposit', status: 'confirmed', amount: '4', fee: '0.04', net_amount: '3.96', coin_id: c.coin.polUsdt });
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });
  t.is((await c.m.events('stray.credited')).length, 1);
  // Credited: in the books, and swept like any deposit.
  const after = await reconcile(c.td);
  t.is(after.code, 0, after.stderr);
  t.like(line(after.json, 'polygon', 'USDT'), { uncredited_in: '0', status: 'ok' });
  t.deepEqual(await unsweptCredited(c.td.daemon.store.read, 'polygon', c.m.accountId, polUsdt), [4_000_000n]);

  // A second credit: 409, nothing changed.
  const again = await c.m.api.post(`/v1/strays/${stray.id}/credit`, {});
  t.is(again.status, 409);
  t.like(again.body.error, { code: 'conflict', details: { reason: 'stray_not_open', status: 'credited' } });
  t.is(await c.m.available(c.coin.polUsdt), '3.96');
  t.is((await c.m.transactions('type=deposit')).filter((x: any) => x.txid === txid).length, 1);
  t.is((await c.m.events('stray.credited')).length, 1);
  t.true(await c.m.ledgerClean());

  // The invoice is still paid on its own chain as usual.
  await payFromAnvil(c.eth.node, c.eth.usdt, inv.address, '4', 6);
  await c.eth.node.mine(CONFIRMATIONS - 1);
  await scanned(c, 'ethereum');
  await until('the invoice paid', async () => (await c.m.invoice(inv.id)).status === 'paid');
  t.like(await c.m.invoice(inv.id), { paid_amount: '4', overpaid_amount: '0' });
  t.is(await c.m.available(c.coin.ethUsdt), '3.96');
  t.is((await strays(c)).length, 1);
});

test('another configured token than the invoice coin on the same chain is a stray, not a payment of the other coin', async (t) => {
  const c = await startTwoChains();
  t.teardown(stop(c));
  const inv = await c.m.createInvoice({ amount: '10', currency: 'USDT', coin_id: c.coin.ethUsdt });
  // The EVM chains number an account's deposit addresses with one counter: an address is one chain's only.
  const onPolygon = await c.m.createInvoice({ amount: '10', currency: 'USDT', coin_id: c.coin.polUsdt });
  t.not(onPolygon.address, inv.address);
  const txid = await payFromAnvil(c.eth.node, c.usdc, inv.address, '10', 6);
  await c.eth.node.mine(CONFIRMATIONS - 1);
  await scanned(c, 'ethereum');
  await until('the stray listed', async () => (await strays(c)).length === 1);
  const [stray] = await strays(c);
  t.like(stray, { coin_id: c.coin.ethUsdc, ticker: 'USDC', network: 'ethereum', amount: '10', txid, invoice_id: inv.id, status: 'open' });
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });
  t.is((await c.m.transactions(`invoice_id=${inv.id}`)).length, 0);
  t.is(await c.m.available(c.coin.ethUsdc), '0');
  t.is(await c.m.available(c.coin.ethUsdt), '0');
  t.is((await c.m.events('invoice.pending')).length, 0);

  // Native coin to a token invoice's address is a stray too.
  await payFromAnvil(c.eth.node, 'native', inv.address, '0.25', 18);
  await c.eth.node.mine(CONFIRMATIONS - 1);
  await scanned(c, 'ethereum');
  await until('the second stray listed', async () => (await strays(c)).length === 2);
  t.like((await strays(c, '?network=ethereum'))[0], { coin_id: c.coin.ethEth, ticker: 'ETH', amount: '0.25', status: 'open' });
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });
  t.is(await c.m.available(c.coin.ethEth), '0');
  t.true(await c.m.ledgerClean());
});

test('a reorganisation that drops a credited stray reverts it: the credit taken back by an adjustment, stray.reverted, ledger clean', async (t) => {
  const c = await startTwoChains();
  t.teardown(stop(c));
  const inv = await c.m.createInvoice({ amount: '2', currency: 'USDT', coin_id: c.coin.ethUsdt });
  const snapshot = await c.pol.node.rpc<string>('evm_snapshot');
  const txid = await payFromAnvil(c.pol.node, c.pol.usdt, inv.address, '2', 6);
  await c.pol.node.mine(CONFIRMATIONS - 1);
  await scanned(c, 'polygon');
  await until('the stray listed', async () => (await strays(c)).length === 1);
  const [stray] = await strays(c);
  await strayWhen(c, stray.id, () => true, 'read');
  await until('the stray confirmed', async () => (await c.m.api.post(`/v1/strays/${stray.id}/credit`, {})).status === 200);
  t.is(await c.m.available(c.coin.polUsdt), '2');
  const oldTip = await c.pol.node.blockNumber();

  t.true(await c.pol.node.rpc<boolean>('evm_revert', [snapshot]));
  await c.pol.node.mine(CONFIRMATIONS + 2);
  t.true((await c.pol.node.blockNumber()) > oldTip);
  const reverted = await strayWhen(c, stray.id, (s) => s.status !== 'credited', 'the stray reverted');
  t.like(reverted, { status: 'reverted', txid });
  t.is(await c.m.available(c.coin.polUsdt), '0');
  const adjustments = (await c.m.transactions('type=adjustment')).filter((x: any) => x.txid === txid);
  t.is(adjustments.length, 1);
  t.like(adjustments[0], { amount: '-2', status: 'confirmed' });
  const events = await c.m.events('stray.reverted');
  t.is(events.length, 1);
  t.like(events[0]!.data.stray, { id: stray.id, status: 'reverted' });
  // A reverted stray cannot be credited.
  const late = await c.m.api.post(`/v1/strays/${stray.id}/credit`, {});
  t.is(late.status, 409);
  t.like(late.body.error, { code: 'conflict', details: { reason: 'stray_not_open', status: 'reverted' } });
  t.is(await c.m.available(c.coin.polUsdt), '0');
  t.true(await c.m.ledgerClean());
  t.like(await c.m.invoice(inv.id), { status: 'new', paid_amount: '0' });
});

test("a stray on an archived static address is found by the slow scan; another account sees no stray of this one (404), and the list's filters", async (t) => {
  const c = await startTwoChains({ static_addresses: { archived_scan_hours: 100 } });
  t.teardown(stop(c));
  const created = await c.m.api.post('/v1/addresses', { customer_id: 'cust-1', coin_id: c.coin.ethUsdt });
  t.is(created.status, 201);
  const a = created.body;
  t.is((await c.m.api.post(`/v1/addresses/${a.id}/archive`, {})).status, 200);
  t.is(c.td.daemon.watched.lookup('ethereum', a.address), undefined);

  const txid = await payFromAnvil(c.eth.node, c.usdc, a.address, '7', 6);
  await c.eth.node.mine(CONFIRMATIONS - 1);
  await scanned(c, 'ethereum');
  t.is((await strays(c)).length, 0);
  const scan = c.td.daemon.archivedScans.find((s) => s.chainId === 'ethereum')!;
  const round = await scan.run();
  t.like(round, { found: 1 });
  await until('the stray listed', async () => (await strays(c)).length === 1);
  const [stray] = await strays(c);
  t.like(stray, { coin_id: c.coin.ethUsdc, amount: '7', txid, to_address: a.address, address_id: a.id, invoice_id: null, status: 'open' });
  // Never credited as a deposit of the address's coin.
  t.is(await c.m.available(c.coin.ethUsdt), '0');
  t.is(await c.m.available(c.coin.ethUsdc), '0');
  t.is((await c.m.events('deposit.pending')).length, 0);
  t.is((await c.m.events('stray.detected')).length, 1);

  // Filters: status, network, invoice_id.
  const inv = await c.m.createInvoice({ amount: '1', currency: 'USDT', coin_id: c.coin.ethUsdt });
  await payFromAnvil(c.pol.node, c.pol.usdt, inv.address, '1', 6);
  await scanned(c, 'polygon');
  await until('both strays listed', async () => (await strays(c)).length === 2);
  t.deepEqual(
    (await strays(c, '?network=polygon')).map((s) => s.invoice_id),
    [inv.id],
  );
  t.deepEqual(
    (await strays(c, '?network=ethereum')).map((s) => s.id),
    [stray.id],
  );
  t.deepEqual(
    (await strays(c, `?invoice_id=${inv.id}`)).map((s) => s.network),
    ['polygon'],
  );
  t.is((await strays(c, '?status=credited')).length, 0);
  t.is((await strays(c, '?status=open')).length, 2);
  const page = await c.m.api.get('/v1/strays?limit=1');
  t.is(page.body.items.length, 1);
  t.truthy(page.body.next_cursor);
  const next = await c.m.api.get(`/v1/strays?limit=1&cursor=${page.body.next_cursor}`);
  t.is(next.body.items.length, 1);
  t.not(next.body.items[0].id, page.body.items[0].id);
  const bad = await c.m.api.get('/v1/strays?status=lost');
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'validation_error');

  // Another account: none of it.
  const other = await merchantSide(c.td);
  t.deepEqual((await other.api.get('/v1/strays')).body.items, []);
  const missing = await other.api.get(`/v1/strays/${stray.id}`);
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
  const notTheirs = await other.api.post(`/v1/strays/${stray.id}/credit`, {});
  t.is(notTheirs.status, 404);
  t.is((await c.m.api.get(`/v1/strays/${stray.id}`)).body.status, 'open');
  t.is((await c.m.events('stray.credited')).length, 0);
});

test("credited strays on the other EVM chain (its native coin and a token) are swept into the account's treasury on that chain: top-up and gas there, books clean, and a withdrawal of them is paid there", async (t) => {
  const c = await startTwoChains({ payouts: { batch_window_seconds: 0, replace_after_blocks: 3 } }, { min: { POL: '0', USDT: '0' } });
  t.teardown(stop(c));
  const store = c.td.daemon.store;
  const polChain = c.td.daemon.config.chains.find((x) => x.id === 'polygon')!;
  const polygon = new EvmAdapter({ ...polChain, rpc_url: c.pol.node.rpcUrl });
  const ethChain = c.td.daemon.config.chains.find((x) => x.id === 'ethereum')!;
  const ethereum = new EvmAdapter({ ...ethChain, rpc_url: c.eth.node.rpcUrl });
  const onPolygon = async (address: string, asset: string) => (await polygon.balances([address], asset))[0]!;
  const station = c.td.daemon.addresses.gasStation('polygon').address;
  await payFromAnvil(c.pol.node, 'native', station, '10', 18);
  const coinPol = coinId('polygon', 'native');

  // An invoice for USDT on ethereum, paid on polygon in POL and in USDT: two strays there.
  const inv = await c.m.createInvoice({ amount: '5', currency: 'USDT', coin_id: c.coin.ethUsdt });
  t.is(inv.network, 'ethereum');
  await payFromAnvil(c.pol.node, 'native', inv.address, '0.5', 18);
  await payFromAnvil(c.pol.node, c.pol.usdt, inv.address, '5', 6);
  await c.pol.node.mine(CONFIRMATIONS);
  await scanned(c, 'polygon');
  await until('both strays listed', async () => (await strays(c, '?network=polygon')).length === 2);
  // Nothing is swept before the strays are credited (the sweeps' minimum is 0 on polygon).
  t.is(Number((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends`))[0].n), 0);
  const open = await strays(c, '?network=polygon');
  const credit = (ticker: string) =>
    until(`stray ${ticker} credited`, async () => (await c.m.api.post(`/v1/strays/${open.find((s) => s.ticker === ticker)!.id}/credit`, {})).status === 200);

  // The sweeps: on polygon, from the invoice's address, into the account's treasury there. The POL
  // first (the gas it leaves behind is then too little for the token's sweep: a top-up on polygon).
  let on = true;
  const miner = (async () => {
    while (on) {
      await c.pol.node.mine(1).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  const stopMiner = async () => {
    on = false;
    await miner;
  };
  t.teardown(stopMiner);
  const finalSweeps = async () =>
    (await store.read.query(`SELECT * FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND booked_at IS NOT NULL`)) as any[];
  await credit('POL');
  t.is(await c.m.available(coinPol), '0.5');
  await until('the POL stray swept and booked', async () => (await finalSweeps()).length === 1, 60_000);
  await credit('USDT');
  t.is(await c.m.available(c.coin.polUsdt), '5');
  await until('both strays swept and booked', async () => (await finalSweeps()).length === 2, 60_000);
  await until(
    'every send final and booked',
    async () =>
      Number((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE status IN ('signed', 'broadcast') OR booked_at IS NULL`))[0].n) === 0,
    30_000,
  );
  const sends = (await store.read.query(`SELECT * FROM account_sends ORDER BY kind, coin_id`)) as any[];
  t.true(
    sends.every((s) => s.chain_id === 'polygon' && s.status === 'mined' && Number(s.succeeded) === 1),
    JSON.stringify(sends.map((s) => [s.chain_id, s.kind, s.status])),
  );
  const sweeps = sends.filter((s) => s.kind === 'sweep');
  t.deepEqual(sweeps.map((s) => s.coin_id).sort(), [coinPol, c.coin.polUsdt].sort());
  t.true(sweeps.every((s) => s.from_address === inv.address));
  const treasury = sweeps[0]!.to_address as string;
  t.is(sweeps[1]!.to_address, treasury);
  const topUps = sends.filter((s) => s.kind === 'topup');
  t.is(topUps.length, 1, 'the token sweep topped up on polygon');
  t.like(topUps[0], { from_address: station, to_address: inv.address });
  // The coins left the address on the chain they arrived on, and are at the treasury there.
  t.is(await onPolygon(inv.address, c.pol.usdt), 0n);
  t.is(await onPolygon(treasury, c.pol.usdt), 5_000_000n);
  const polAtTreasury = await onPolygon(treasury, 'native');
  t.true(polAtTreasury > 490_000_000_000_000_000n && polAtTreasury < 500_000_000_000_000_000n, `the POL less the gas: ${polAtTreasury}`);
  t.true((await onPolygon(inv.address, 'native')) < 100_000_000_000_000n, 'at most the unused gas reserve stays behind');
  // Nothing moved on ethereum.
  t.is((await ethereum.balances([treasury], 'native'))[0], 0n);
  // The gas booked to the network book, the balances as credited, the books clean.
  t.true((await store.read.findBy(LedgerEntryEntity, { credit_book: NETWORK_BOOK, code: 'gas_topup' })).some((e) => e.coin_id === coinPol));
  const costs = await store.read.findBy(LedgerEntryEntity, { debit_book: NETWORK_BOOK, code: 'network_cost' });
  t.true(costs.filter((e) => e.coin_id === coinPol).length >= 2, 'the sweeps gas booked in POL');
  t.false(
    costs.some((e) => e.coin_id === c.coin.ethEth),
    'no gas booked on ethereum',
  );
  t.is(await c.m.available(coinPol), '0.5');
  t.is(await c.m.available(c.coin.polUsdt), '5');
  t.true(await c.m.ledgerClean());
  const rec = await reconcile(c.td);
  t.is(rec.code, 0, rec.stderr);
  t.like(line(rec.json, 'polygon', 'USDT'), { status: 'ok' });
  t.like(line(rec.json, 'polygon', 'POL'), { status: 'ok' });

  // A withdrawal of the credited USDT (less room for its network fee) is paid on polygon from that treasury.
  // A verified account whose security changes (the key's creation too) are a day old: no review.
  const { key } = await c.td.daemon.keys.create(
    c.m.accountId,
    { email: c.m.owner.email, otp: new OtpSource(c.m.owner.totp, { now: () => new Date() }).next() },
    { name: 'withdrawals', permissions: ['read', 'withdraw'], ip_whitelist: [], rate_limit_per_minute: 600, test: false },
  );
  await store.write(async (em) => {
    await em.update(SecurityLogEntity, { account_id: c.m.accountId }, { created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() });
    await em.update(AccountEntity, { id: c.m.accountId }, { verified: true });
  });
  c.td.daemon.team.changedOutside();
  const withdrawKey = new SignedClient(c.td.url, key.key_id, key.secret);
  const to = '0x' + 'ab'.repeat(20);
  const created = await withdrawKey.post(
    '/v1/withdrawals',
    { coin_id: c.coin.polUsdt, amount: '4', to_address: to },
    { headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'stray-withdrawal-1' } },
  );
  t.is(created.status, 201, JSON.stringify(created.json));
  // Polled in the database: the signed client allows only so many requests a second.
  await until(
    'the withdrawal completed',
    async () => (await store.read.query(`SELECT status FROM withdrawals WHERE id = ?`, [created.json.id]))[0]?.status === 'completed',
    60_000,
  );
  const w = (await withdrawKey.get(`/v1/withdrawals/${created.json.id}`)).json;
  t.like(w, { status: 'completed' });
  t.is(w.coin_id, c.coin.polUsdt);
  t.is(await onPolygon(to, c.pol.usdt), 4_000_000n);
  t.is(await onPolygon(treasury, c.pol.usdt), 1_000_000n);
  t.is((await ethereum.balances([to], c.eth.usdt))[0], 0n);
  await until(
    'the payout booked',
    async () =>
      Number((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE status IN ('signed', 'broadcast') OR booked_at IS NULL`))[0].n) === 0,
    30_000,
  );
  await stopMiner();
  const charged = Amount.of('1')
    .minus(Amount.of(w.platform_fee ?? '0'))
    .minus(Amount.of(w.network_fee_charged ?? '0'));
  t.is(await c.m.available(c.coin.polUsdt), charged.toString(), 'the withdrawal and its fees charged');
  t.true(await c.m.ledgerClean());
  const last = await reconcile(c.td);
  t.is(last.code, 0, last.stderr);
});
