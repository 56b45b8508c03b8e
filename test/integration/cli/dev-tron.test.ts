/**
 * `coinkeep dev` with Tron: the sandbox also runs the Tron node stand-in as the chain `tron` (TRX
 * and its USDT, the payer funded); `coinkeep dev pay` pays a Tron invoice as a wallet does through
 * the node's API (built by the node, signed by the payer, broadcast) and mines it to its
 * confirmations. The chain is kept under the data dir across restarts. The demo account withdraws
 * TRX and USDT there (the gas station funded and staking), mined with `coinkeep dev mine`.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { TronWeb } from 'tronweb';
import { COINKEEP_BIN } from '../../helpers/cli';
import { bash, sandboxEnv, sandboxStarted } from '../../helpers/sandbox';
import { signRequest } from '../../helpers/signer';

const env = sandboxEnv();

test.after.always(() => env.cleanup());

test.serial(
  'dev runs the Tron stand-in as chain tron with TRX and USDT; dev pay pays USDT (under, then the rest) and TRX invoices; the chain survives a restart',
  async (t) => {
    let dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
    const info = await sandboxStarted(dev);
    const tron = info.chains.find((c: { id: string }) => c.id === 'tron');
    t.like(tron, { kind: 'tron' });
    t.regex(tron.rpc_url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    t.deepEqual(
      tron.coins.map((c: { ticker: string }) => c.ticker),
      ['TRX', 'USDT'],
    );
    const [trx, usdt] = tron.coins as Array<{ coin_id: string; contract: string | null }>;
    t.regex(usdt!.contract!, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);

    const create = async (body: Record<string, unknown>) => {
      const text = JSON.stringify(body);
      const headers = {
        ...signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'POST', target: '/v1/invoices', body: text }),
        'Content-Type': 'application/json',
      };
      const res = await fetch(`${info.base_url}/v1/invoices`, { method: 'POST', headers, body: text });
      t.is(res.status, 201);
      return (await res.json()) as { id: string; address: string };
    };
    const usdtInvoice = await create({ amount: '30', currency: 'USDT', coin_id: usdt!.coin_id });
    t.regex(usdtInvoice.address, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const under = await env.run(['--json', 'dev', 'pay', usdtInvoice.id, '--amount', '10'], { timeoutMs: 60000 });
    t.is(under.code, 0, under.stderr);
    t.like(under.json, { ticker: 'USDT', network: 'tron', amount: '10', to: usdtInvoice.address, credited: true, invoice_status: 'underpaid' });
    t.regex(under.json.txid, /^[0-9a-f]{64}$/);
    const rest = await env.run(['--json', 'dev', 'pay', usdtInvoice.id], { timeoutMs: 60000 });
    t.like(rest.json, { amount: '20', invoice_status: 'paid', paid_amount: '30' });

    const trxInvoice = await create({ amount: '125', currency: 'TRX', coin_id: trx!.coin_id });
    const paid = await env.run(['--json', 'dev', 'pay', trxInvoice.id], { timeoutMs: 60000 });
    t.like(paid.json, { ticker: 'TRX', amount: '125', credited: true, invoice_status: 'paid' });

    const tronStatus = async () => (await env.run(['--json', 'status'])).json.chains.find((c: { chain_id: string }) => c.chain_id === 'tron');
    const tip = (await tronStatus()).node_tip;
    t.true(tip >= 9);
    t.is((await dev.stop('SIGINT')).code, 0, dev.stderr);

    dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
    const again = await sandboxStarted(dev);
    t.deepEqual(again.chains.find((c: { id: string }) => c.id === 'tron').coins, tron.coins, 'the same token contract');
    let after = await tronStatus();
    for (const deadline = Date.now() + 10000; after?.node_tip == null && Date.now() < deadline;) after = await tronStatus();
    t.like(after, { node_tip: tip, maintenance: false, last_error: null }, 'the chain went on from where it stopped: same genesis block, same height');
    const target = `/v1/invoices/${usdtInvoice.id}`;
    const got = await fetch(again.base_url + target, { headers: signRequest({ keyId: info.key_id, secret: info.key_secret, method: 'GET', target }) });
    t.like(await got.json(), { status: 'paid', paid_amount: '30' });

    // The demo account withdraws TRX and USDT: the gas station was funded and stakes for energy; the sandbox mines on demand.
    t.true(
      again.gas_stations.some((g: { chain_id: string }) => g.chain_id === 'tron'),
      'the Tron gas station is funded',
    );
    const signed = async (method: 'GET' | 'POST', target: string, body?: Record<string, unknown>) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers = {
        ...signRequest({ keyId: info.key_id, secret: info.key_secret, method, target, body: text }),
        ...(text ? { 'Content-Type': 'application/json' } : {}),
      };
      const res = await fetch(again.base_url + target, { method, headers, body: text });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    };
    const payee = TronWeb.address.fromHex('41' + randomBytes(20).toString('hex')) as string;
    const withdrawals = [];
    for (const [coin, amount] of [
      [trx!.coin_id, '10'],
      [usdt!.coin_id, '5'],
    ] as const) {
      const w = await signed('POST', '/v1/withdrawals', { coin_id: coin, amount, to_address: payee });
      t.is(w.status, 201, JSON.stringify(w.json));
      // Granting withdraw is a security change: the first day's withdrawals wait in review.
      t.like(w.json, { status: 'review', review_reason: 'pattern' });
      const approved = await env.run(['--json', 'dev', 'approve', w.json.id]);
      t.like(approved.json, { id: w.json.id, status: 'pending' }, approved.stderr);
      withdrawals.push(w.json.id as string);
    }
    const deadline = Date.now() + 180_000;
    let states: string[] = [];
    while (Date.now() < deadline) {
      states = await Promise.all(withdrawals.map(async (id) => (await signed('GET', `/v1/withdrawals/${id}`)).json.status as string));
      if (states.every((s) => s === 'completed')) break;
      await env.run(['dev', 'mine', '2'], { timeoutMs: 30000 });
    }
    t.deepEqual(states, ['completed', 'completed'], 'both withdrawals completed');
    t.is((await dev.stop('SIGTERM')).code, 0);
  },
);
