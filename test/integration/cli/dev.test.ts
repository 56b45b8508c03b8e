/**
 * `coinkeep dev`: the sandbox starts its two EVM chains (ethereum and base, an anvil each with its
 * test USDT and USDC) and the daemon in the foreground, prints its base URL, the demo account, a
 * ck_test_ key with its secret, the chains and a signed curl example that creates an invoice when
 * run; `coinkeep dev pay` pays it, on the invoice's chain or (--network) on the other; Ctrl-C stops
 * it all, and so does kill -9 of the dev process for its anvils.
 * It runs with config/dev.yaml's settings, moved to a temp data dir and a free port.
 */
import test from 'ava';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { COINKEEP_BIN } from '../../helpers/cli';
import { bash, SANDBOX_START_MS, sandboxEnv, sandboxStarted } from '../../helpers/sandbox';
import { signRequest } from '../../helpers/signer';

const env = sandboxEnv();

/** One JSON-RPC call to a sandbox chain's node. */
async function rpc<T = string>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** An ERC-20 read (no arguments, or one address) on a sandbox chain, as a number. */
async function erc20(url: string, contract: string, fn: 'decimals()' | 'balanceOf(address)', address?: string): Promise<bigint> {
  const selector = { 'decimals()': '0x313ce567', 'balanceOf(address)': '0x70a08231' }[fn];
  const data = selector + (address ? address.slice(2).toLowerCase().padStart(64, '0') : '');
  return BigInt(await rpc(url, 'eth_call', [{ to: contract, data }, 'latest']));
}

const balance = async (url: string, address: string): Promise<bigint> => BigInt(await rpc(url, 'eth_getBalance', [address, 'latest']));

test.after.always(() => env.cleanup());

let first: { account: string; key: string; secret: string; invoiceId: string } | undefined;

test.serial('dev prints the base URL, demo account, test key and a signed curl example that works; Ctrl-C stops it', async (t) => {
  const dev = env.spawn(COINKEEP_BIN, ['dev']);
  await dev.waitFor(/public catalogue:/, SANDBOX_START_MS);
  const out = dev.stdout;
  const baseUrl = out.match(/base URL\s+(http:\/\/127\.0\.0\.1:\d+)/)![1]!;
  const account = out.match(/account\s+([0-9a-f-]{36})/)![1]!;
  const key = out.match(/test key\s+(ck_test_[0-9A-Za-z]{24})/)![1]!;
  const secret = out.match(/secret\s+([A-Za-z0-9_-]{43})/)![1]!;
  t.regex(out, /owner\s+owner@demo\.coinkeep\.test \(TOTP secret [A-Z2-7]{32}\)/);

  // The example, exactly as printed: from the KEY= line to the curl line.
  const lines = out.split('\n');
  const from = lines.findIndex((l) => l.startsWith('KEY='));
  const to = lines.findIndex((l, i) => i > from && l.startsWith('curl '));
  t.true(from >= 0 && to > from, out);
  const example = lines.slice(from, to + 1).join('\n');
  const ran = await bash(example);
  t.is(ran.code, 0, ran.stderr);
  const invoice = JSON.parse(ran.stdout);
  t.like(invoice, { status: 'new', amount: '25', currency: 'USD', network: 'ethereum' });
  t.regex(invoice.address, /^0x[0-9a-fA-F]{40}$/);
  first = { account, key, secret, invoiceId: invoice.id };
  const rpcUrl = out.match(/chain ethereum \(evm\) at (http:\/\/127\.0\.0\.1:\d+)/)![1]!;
  t.regex(out, /USDT\s+coin_id [0-9a-f-]{36}\s+contract 0x[0-9a-fA-F]{40}/);

  // The second EVM chain, base: another anvil with another chain id, its own USDT and USDC.
  const baseRpc = out.match(/chain base \(evm\) at (http:\/\/127\.0\.0\.1:\d+)/)![1]!;
  t.not(baseRpc, rpcUrl);
  t.is(Number(await rpc(rpcUrl, 'eth_chainId')), 31337);
  t.is(Number(await rpc(baseRpc, 'eth_chainId')), 31338);
  const contracts = (chain: string) => {
    const block = out.slice(out.indexOf(`chain ${chain} (evm)`)).split('\n\n')[0]!;
    const of = (ticker: string) => new RegExp(`${ticker}\\s+coin_id ([0-9a-f-]{36})\\s+contract (0x[0-9a-fA-F]{40})`).exec(block)!;
    return { USDT: { coin: of('USDT')[1]!, contract: of('USDT')[2]! }, USDC: { coin: of('USDC')[1]!, contract: of('USDC')[2]! } };
  };
  const eth = contracts('ethereum');
  const base = contracts('base');
  for (const [url, tokens] of [
    [rpcUrl, eth],
    [baseRpc, base],
  ] as const) {
    for (const token of [tokens.USDT, tokens.USDC]) {
      t.not(await rpc(url, 'eth_getCode', [token.contract, 'latest']), '0x');
      t.is(await erc20(url, token.contract, 'decimals()'), 6n);
    }
  }
  t.notDeepEqual([base.USDT.contract, base.USDC.contract], [eth.USDT.contract, eth.USDC.contract]);
  t.regex(out, /Pay on the wrong network \(an invoice's address on ethereum or base is the same on the other\): coinkeep dev pay INVOICE_ID --network base/);

  // dev pay --network base: the ETH lands on base at the invoice's address, nothing on ethereum.
  const wrongNet = await env.run(['--json', 'dev', 'pay', invoice.id, '--network', 'base', '--amount', '0.002'], { timeoutMs: 40000 });
  t.is(wrongNet.code, 0, wrongNet.stderr);
  t.like(wrongNet.json, {
    invoice_id: invoice.id,
    ticker: 'ETH',
    network: 'base',
    invoice_network: 'ethereum',
    amount: '0.002',
    to: invoice.address,
    stray: true,
  });
  const onBase = await rpc<{ to: string; value: string; blockNumber: string } | null>(baseRpc, 'eth_getTransactionByHash', [wrongNet.json.txid]);
  t.is(onBase!.to.toLowerCase(), invoice.address.toLowerCase());
  t.is(BigInt(onBase!.value), 2_000_000_000_000_000n);
  t.is(await rpc<unknown>(rpcUrl, 'eth_getTransactionByHash', [wrongNet.json.txid]), null);
  t.is(await balance(baseRpc, invoice.address), 2_000_000_000_000_000n);
  t.is(await balance(rpcUrl, invoice.address), 0n);
  const strayLine = await env.run(['dev', 'pay', invoice.id, '--network', 'base', '--amount', '0.001'], { timeoutMs: 40000 });
  t.is(strayLine.code, 0, strayLine.stderr);
  t.regex(strayLine.stdout, /\(base\) in 0x[0-9a-f]{64}\nnot the invoice's network \(ethereum\): a stray payment, not credited to invoice /);
  t.is(await balance(baseRpc, invoice.address), 3_000_000_000_000_000n);

  // An unknown network, or one where an EVM address cannot be paid, is an error naming the networks.
  const unknown = await env.run(['dev', 'pay', invoice.id, '--network', 'nowhere']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /--network nowhere: not a network of the sandbox; its networks are ethereum, base, bitcoin, tron/);
  const otherFamily = await env.run(['dev', 'pay', invoice.id, '--network', 'tron']);
  t.is(otherFamily.code, 1);
  t.regex(otherFamily.stderr, /--network tron: the invoice's address is on ethereum \(evm\); it can be paid on ethereum, base/);
  const coinElsewhere = await env.run(['dev', 'pay', invoice.id, '--network', 'base', '--coin', eth.USDC.coin]);
  t.is(coinElsewhere.code, 1);
  t.regex(coinElsewhere.stderr, new RegExp(`--coin ${eth.USDC.coin}: not on base`));
  t.is(await balance(baseRpc, invoice.address), 3_000_000_000_000_000n, 'nothing paid by the refused commands');

  // dev pay: less than due (underpaid), then what is still due (paid), each mined to its confirmations.
  const under = await env.run(['--json', 'dev', 'pay', invoice.id, '--amount', '0.001'], { timeoutMs: 40000 });
  t.is(under.code, 0, under.stderr);
  t.like(under.json, {
    invoice_id: invoice.id,
    ticker: 'ETH',
    network: 'ethereum',
    amount: '0.001',
    to: invoice.address,
    credited: true,
    invoice_status: 'underpaid',
    paid_amount: '0.001',
  });
  t.regex(under.json.txid, /^0x[0-9a-f]{64}$/);
  const rest = await env.run(['dev', 'pay', invoice.id], { timeoutMs: 40000 });
  t.is(rest.code, 0, rest.stderr);
  t.regex(rest.stdout, new RegExp(`invoice ${invoice.id}: paid, paid ${invoice.payer_amount.replace('.', '\\.')}`));
  const target = `/v1/invoices/${invoice.id}`;
  const got = await fetch(baseUrl + target, { headers: signRequest({ keyId: key, secret, method: 'GET', target }) });
  t.like(await got.json(), { status: 'paid', paid_amount: invoice.payer_amount, remaining_amount: '0' });

  // A USDT invoice (the sandbox's test token) paid the same way.
  const usdtCoin = out.match(/USDT\s+coin_id ([0-9a-f-]{36})\s+contract/)![1]!;
  const body = JSON.stringify({ amount: '12.5', currency: 'USDT', coin_id: usdtCoin });
  const made = await fetch(baseUrl + '/v1/invoices', {
    method: 'POST',
    body,
    headers: { ...signRequest({ keyId: key, secret, method: 'POST', target: '/v1/invoices', body }), 'Content-Type': 'application/json' },
  });
  t.is(made.status, 201);
  const usdtInvoice = (await made.json()) as { id: string; address: string };
  const usdtAddress = usdtInvoice.address;
  // On base: the USDT of base (the same ticker), then its USDC (--coin), each to the invoice's address there.
  const baseUsdt = await env.run(['--json', 'dev', 'pay', usdtInvoice.id, '--network', 'base', '--amount', '3'], { timeoutMs: 40000 });
  t.is(baseUsdt.code, 0, baseUsdt.stderr);
  t.like(baseUsdt.json, { ticker: 'USDT', coin_id: base.USDT.coin, network: 'base', invoice_network: 'ethereum', amount: '3', stray: true });
  t.is(await erc20(baseRpc, base.USDT.contract, 'balanceOf(address)', usdtAddress), 3_000_000n);
  const baseUsdc = await env.run(['--json', 'dev', 'pay', usdtInvoice.id, '--network', 'base', '--coin', base.USDC.coin, '--amount', '4'], {
    timeoutMs: 40000,
  });
  t.is(baseUsdc.code, 0, baseUsdc.stderr);
  t.like(baseUsdc.json, { ticker: 'USDC', coin_id: base.USDC.coin, network: 'base', amount: '4' });
  const receipt = await rpc<{ logs: Array<{ address: string; topics: string[]; data: string }> }>(baseRpc, 'eth_getTransactionReceipt', [baseUsdc.json.txid]);
  const transfer = receipt.logs.find((l) => l.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')!;
  t.is(transfer.address.toLowerCase(), base.USDC.contract.toLowerCase());
  t.is(BigInt('0x' + transfer.topics[2]!.slice(26)), BigInt(usdtAddress));
  t.is(BigInt(transfer.data), 4_000_000n);
  t.is(await erc20(rpcUrl, eth.USDT.contract, 'balanceOf(address)', usdtAddress), 0n);
  // Another coin of the invoice's own network (--coin) is a stray too: paid, not waited for.
  const ethUsdc = await env.run(['dev', 'pay', usdtInvoice.id, '--coin', eth.USDC.coin, '--amount', '2'], { timeoutMs: 40000 });
  t.is(ethUsdc.code, 0, ethUsdc.stderr);
  t.regex(
    ethUsdc.stdout,
    /^paid 2 USDC to 0x[0-9a-fA-F]{40} \(ethereum\) in 0x[0-9a-f]{64}\nnot the invoice's coin: a stray payment, not credited to invoice /,
  );
  t.is(await erc20(rpcUrl, eth.USDC.contract, 'balanceOf(address)', usdtAddress), 2_000_000n);
  const usdt = await env.run(['--json', 'dev', 'pay', usdtInvoice.id], { timeoutMs: 40000 });
  t.is(usdt.code, 0, usdt.stderr);
  // What base received did not count: the invoice's 12.5 are all still due on ethereum.
  t.like(usdt.json, { ticker: 'USDT', network: 'ethereum', amount: '12.5', invoice_status: 'paid', paid_amount: '12.5', stray: false });

  const sandboxYaml = readFileSync(path.join(env.dataDir, 'sandbox.yaml'), 'utf8');
  const second = await env.run(['dev']);
  t.is(second.code, 1);
  t.regex(second.stderr, /a coinkeepd is already running with the data dir .*: stop it first/);
  t.is(readFileSync(path.join(env.dataDir, 'sandbox.yaml'), 'utf8'), sandboxYaml);

  const wrong = await env.run(['dev', 'pay', invoice.id, '--amount', 'ten']);
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /--amount must be a positive decimal/);
  const missing = await env.run(['dev', 'pay', '00000000-0000-4000-8000-000000000000']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /invoice not found/);

  // The key is a ck_test_ key with every permission, withdraw granted by the demo owner.
  const keysTarget = '/v1/account/api-keys';
  const res = await fetch(baseUrl + keysTarget, { headers: signRequest({ keyId: key, secret, method: 'GET', target: keysTarget }) });
  t.is(res.status, 200);
  const listed = ((await res.json()) as { items: Array<{ key_id: string; permissions: string[]; withdraw_status: string }> }).items;
  const demoKey = listed.find((k) => k.key_id === key)!;
  t.deepEqual([...demoKey.permissions].sort(), ['create_address', 'create_invoice', 'read', 'withdraw']);
  t.is(demoKey.withdraw_status, 'granted');
  const shown = await env.run(['--json', 'account', 'show', '--account', account]);
  t.is(shown.code, 0, shown.stderr);
  t.is(shown.json.account.verified, true);
  const log = await env.run(['--json', 'security-log', '--account', account]);
  t.is(log.code, 0, log.stderr);
  const grant = log.json.items.find((e: { action: string }) => e.action === 'withdraw.granted');
  t.like(grant, { actor: 'owner@demo.coinkeep.test' });
  t.is((await fetch(`${baseUrl}/v1/currencies`)).status, 200);

  const stopped = await dev.stop('SIGINT');
  t.is(stopped.code, 0, dev.stderr);
  t.true(stopped.ms < 10000, `stopped in ${stopped.ms} ms`);
  t.is(dev.stderr, '');
  t.false(existsSync(path.join(env.dataDir, 'coinkeepd.pid')));
  await t.throwsAsync(fetch(`${baseUrl}/healthz`));
  await t.throwsAsync(fetch(rpcUrl, { method: 'POST' }), undefined, 'the sandbox node is stopped too');
  await t.throwsAsync(fetch(baseRpc, { method: 'POST' }), undefined, "and the second chain's");
  t.is(statSync(path.join(env.dataDir, 'demo.json')).mode & 0o777, 0o600);
});

test.serial(
  'dev --json prints one JSON object; the demo account and key are kept across restarts; kill -9 of it leaves none of its anvils running',
  async (t) => {
    const dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
    const info = await sandboxStarted(dev);
    t.like(info, { account_id: first!.account, key_id: first!.key, key_secret: first!.secret, owner_email: 'owner@demo.coinkeep.test' });
    t.regex(info.base_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    t.true(info.curl_example.includes(info.base_url));
    // A ready demo invoice without a coin: its payment page offers the sandbox's coins.
    const demoId = /\/pay\/([0-9a-f-]{36})$/.exec(info.checkout_url)![1];
    const demoPage = await fetch(`${info.base_url}/pay/${demoId}`);
    t.is(demoPage.status, 200);
    t.true((await demoPage.text()).includes('Pay with USDT on Ethereum (ERC-20)'));
    t.like(info.chains[0], { id: 'ethereum', kind: 'evm' });
    t.deepEqual(
      info.chains[0].coins.map((c: { ticker: string }) => c.ticker),
      ['ETH', 'USDT', 'USDC'],
    );
    t.like(info.chains[1], { id: 'base', kind: 'evm' });
    t.deepEqual(
      info.chains[1].coins.map((c: { ticker: string }) => c.ticker),
      ['ETH', 'USDT', 'USDC'],
    );
    // The chain went on from where it stopped (kept under the data dir): the payment is still there.
    let status = await env.run(['--json', 'status']);
    const deadline = Date.now() + 10000;
    while (status.json?.chains?.[0]?.lag !== 0 && Date.now() < deadline) status = await env.run(['--json', 'status']);
    t.like(status.json.chains[0], { chain_id: 'ethereum', lag: 0, maintenance: false, last_error: null });
    // The sandbox funded the chain's gas station; `wallet gas-station` and `status` show it.
    t.regex(info.gas_stations[0].address, /^0x[0-9a-fA-F]{40}$/);
    let station = await env.run(['--json', 'wallet', 'gas-station', '--chain', 'ethereum']);
    while (station.json?.balance === null && Date.now() < deadline) station = await env.run(['--json', 'wallet', 'gas-station', '--chain', 'ethereum']);
    t.like(station.json, { chain_id: 'ethereum', address: info.gas_stations[0].address, warning: null });
    t.regex(station.json.path, /^m\/44'\/60'\/2147483647'\/0\/0$/);
    t.true(Number(station.json.balance) >= 1, JSON.stringify(station.json));
    status = await env.run(['--json', 'status']);
    t.like(status.json.gas_stations[0], { chain_id: 'ethereum', address: info.gas_stations[0].address, warning: null });
    t.true((await env.run(['status'])).stdout.includes(`gas stations:\n  ethereum  ${info.gas_stations[0].address}  balance `));
    const target = `/v1/invoices/${first!.invoiceId}`;
    const got = await fetch(info.base_url + target, { headers: signRequest({ keyId: first!.key, secret: first!.secret, method: 'GET', target }) });
    t.like(await got.json(), { status: 'paid' });

    // The banner's ETH and USDT withdrawal examples, run as printed, estimate and make withdrawals
    // from what dev pay paid in; once approved (the first day's wait in review) they are paid out.
    const examples = info.evm_withdrawal_examples as Array<{
      ticker: string;
      coin_id: string;
      amount: string;
      to_address: string;
      estimate_curl_example: string;
      withdrawal_curl_example: string;
    }>;
    t.deepEqual(
      examples.map((x) => x.ticker),
      ['ETH', 'USDT'],
    );
    const made: Array<{ id: string; ticker: string }> = [];
    for (const x of examples) {
      t.is(x.coin_id, info.chains[0].coins.find((c: { ticker: string }) => c.ticker === x.ticker).coin_id);
      const estimate = await bash(x.estimate_curl_example);
      t.is(estimate.code, 0, estimate.stderr);
      t.like(JSON.parse(estimate.stdout), { coin_id: x.coin_id, amount: x.amount }, estimate.stdout);
      const ran = await bash(x.withdrawal_curl_example);
      t.is(ran.code, 0, ran.stderr);
      const w = JSON.parse(ran.stdout);
      t.like(w, { coin_id: x.coin_id, amount: x.amount, to_address: x.to_address, status: 'review', review_reason: 'pattern' }, ran.stdout);
      const approved = await env.run(['--json', 'dev', 'approve', w.id]);
      t.is(approved.code, 0, approved.stderr);
      made.push({ id: w.id, ticker: x.ticker });
    }
    for (const w of made) {
      const wTarget = `/v1/withdrawals/${w.id}`;
      let last: { status?: string } = {};
      for (const until = Date.now() + 90_000; last.status !== 'completed' && Date.now() < until;) {
        await env.run(['dev', 'mine', '1']);
        last = (await (
          await fetch(info.base_url + wTarget, { headers: signRequest({ keyId: first!.key, secret: first!.secret, method: 'GET', target: wTarget }) })
        ).json()) as { status?: string };
      }
      t.is(last.status, 'completed', `${w.ticker}: ${JSON.stringify(last)}`);
    }

    // kill -9 of coinkeep dev leaves none of its anvils running (a SIGTERM's clean stop is dev-tron's and dev-btc's last step).
    const urls = (info.chains as Array<{ kind: string; rpc_url: string }>).filter((c) => c.kind === 'evm').map((c) => c.rpc_url);
    t.is(urls.length, 2);
    for (const url of urls) t.is(Number(await rpc(url, 'eth_chainId')) > 0, true);
    const killed = await dev.stop('SIGKILL');
    t.is(killed.signal, 'SIGKILL');
    const answering = async () =>
      (
        await Promise.all(
          urls.map((u) =>
            rpc(u, 'eth_blockNumber').then(
              () => u,
              () => null,
            ),
          ),
        )
      ).filter(Boolean);
    let left = await answering();
    for (const until = Date.now() + 15000; left.length > 0 && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100));
      left = await answering();
    }
    t.deepEqual(left, [], 'every anvil of the sandbox ends with the dev process');
  },
);
