/**
 * What java-tron full nodes and TronGrid do that a plain stand-in does not (PRODUCT §15, issue 30):
 * a Lite FullNode with history queries closed is named in `coinkeep status` with the fix; USDT
 * paid through a contract (the stand-in's forwarder: an internal call emits the token's Transfer)
 * is credited, once; a TRX transfer above 2^53 sun is read exactly; the node's rate limiter and a
 * hosted node's quota answers and broadcast codes about the node are NodeUnavailable, never a
 * refusal.
 */
import test from 'ava';
import { LITE_NODE_REASON } from '../../../../src/chains/tron/full-node';
import { TronAdapter } from '../../../../src/chains/tron/tron-adapter';
import { NodeFault, NodeUnavailable } from '../../../../src/chains/types';
import { parseConfig } from '../../../../src/config/schema';
import { COINKEEP_BIN, runBin } from '../../../helpers/cli';
import { cliConfigFile, startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { hex20, signTronTransaction, TronNode } from '../../../helpers/tron-node';
import { CONFIRMATIONS, startTronFixture } from './tron-fixture';
import { waitUntil } from '../../../helpers/poll';

const RECIPIENT = 'TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY';

/** Polls with a deadline of 20,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> => waitUntil(what, ok, timeoutMs);

async function coinkeepStatus(td: TestDaemon, chainId: string): Promise<{ maintenance: boolean; last_error: string | null }> {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), '--json', 'status'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`coinkeep status failed: ${r.stderr}`);
  return (r.json as { chains: Array<{ chain_id: string; maintenance: boolean; last_error: string | null }> }).chains.find((c) => c.chain_id === chainId)!;
}

function adapterOf(node: TronNode): TronAdapter {
  return new TronAdapter(
    parseConfig({
      chains: [
        {
          id: 'tron',
          kind: 'tron',
          full_node_url: node.url,
          tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
          options: { genesis_block_id: node.genesisId },
        },
      ],
    }).chains[0]!,
  );
}

test('a Lite FullNode with history queries closed: TRX in maintenance, and coinkeep status names the node and the setting that fixes it', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  node.lite(true);
  const chain = {
    id: 'tron',
    kind: 'tron',
    full_node_url: node.url,
    confirmations: 1,
    options: { poll_interval_ms: 50, stall_seconds: 0, genesis_block_id: node.genesisId },
  };
  const td = await startTestDaemon({ chains: [chain] });
  t.teardown(() => td.stop());
  t.like(await coinkeepStatus(td, 'tron'), { maintenance: true, last_error: LITE_NODE_REASON });
  t.regex(LITE_NODE_REASON, /node\.openHistoryQueryWhenLiteFN = true/);

  node.lite(false);
  await until('out of maintenance', () => !td.daemon.chains.status()[0]!.maintenance);
  t.false((await coinkeepStatus(td, 'tron')).maintenance);
});

test("USDT paid through a forwarder contract (an internal call moves the token) is credited once, from the token's own Transfer log", async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '12.5');
  const txid = f.node.pay(inv.address, f.node.usdt, 12_500_000n, { via: 'forwarder' });
  f.node.mine();
  const tx = f.node.blocks.at(-1)!.transactions![0]!;
  t.is(tx.raw_data.contract[0]!.parameter.value.contract_address, '41' + hex20(f.node.forwarder), 'the transaction calls the forwarder, not the token');
  t.is(f.node.info(txid).log!.length, 2, "the token's Transfer and the forwarder's own lookalike");
  f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '12.5', overpaid_amount: '0' });
  const txs = await f.transactions(inv.id);
  t.is(txs.length, 1);
  t.like(txs[0], { txid, amount: '12.5', status: 'confirmed' });
  t.is(await f.available('USDT'), '12.5');
  t.true(await f.ledgerClean());
});

test('a TRX transfer above 2^53 sun is read and credited exactly', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '10');
  const sun = 2n ** 53n + 1n;
  const txid = f.node.pay(inv.address, 'native', sun);
  f.node.mine(CONFIRMATIONS);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'new' && i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '9007199254.740993', overpaid_amount: '9007199244.740993' });
  t.like((await f.transactions(inv.id))[0], { txid, amount: '9007199254.740993' });
  t.is(f.node.trxBalance(inv.address), sun);
  t.true(await f.ledgerClean());
});

test('the node\'s rate limiter ("lack of computing resources") and a hosted node over its quota (HTTP 429, Retry-After) are NodeUnavailable, rate limited', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  const adapter = adapterOf(node);
  node.throttle('lack-of-resources');
  const limited = await t.throwsAsync(adapter.tip());
  t.true(limited instanceof NodeUnavailable);
  t.true((limited as NodeUnavailable).rateLimited);
  t.regex(limited!.message, /^tron node getnowblock: lack of computing resources/);
  node.throttle('http429');
  const quota = await t.throwsAsync(adapter.tip());
  t.true(quota instanceof NodeUnavailable);
  t.like(quota, { rateLimited: true, retryAfterMs: 1000 });
  node.throttle(null);
  t.is((await adapter.tip()).height, 0);
});

test('broadcast codes about the node (SERVER_BUSY, NO_CONNECTION, NOT_ENOUGH_EFFECTIVE_CONNECTION, BLOCK_UNSOLIDIFIED) are NodeUnavailable, never a refusal', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  const adapter = adapterOf(node);
  const head = node.head();
  const raw = {
    contract: [
      {
        parameter: {
          value: { amount: 1_000_000, owner_address: '41' + hex20(node.payer), to_address: '41' + hex20(RECIPIENT) },
          type_url: 'type.googleapis.com/protocol.TransferContract',
        },
        type: 'TransferContract',
      },
    ],
    ref_block_bytes: head.ref_block_bytes,
    ref_block_hash: head.ref_block_hash,
    expiration: head.timestamp + 60_000,
    timestamp: head.timestamp,
  };
  const signed = signTronTransaction(raw, node.payerKey);
  for (const code of ['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'BLOCK_UNSOLIDIFIED']) {
    node.busy(code);
    const err = await t.throwsAsync(adapter.broadcast(signed.hex));
    t.true(err instanceof NodeUnavailable, code);
    t.regex(err!.message, new RegExp(`^tron node broadcasthex: ${code}`));
  }
  node.busy(null);
  t.is(await adapter.broadcast(signed.hex), signed.txID);
});

test('a Lite FullNode is a NodeFault naming the fix at the adapter too', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  node.lite(true);
  const err = await t.throwsAsync(adapterOf(node).tip());
  t.true(err instanceof NodeFault);
  t.is(err!.message, LITE_NODE_REASON);
});
