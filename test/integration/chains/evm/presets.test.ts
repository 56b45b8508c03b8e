/**
 * A chain from a preset, read back through the catalogue of the real daemon (issue 32 §1): BSC's
 * USDT and USDC with 18 decimals. The node is a local anvil run with BSC's chain id, the issuers'
 * contract addresses given code that answers decimals() (anvil_setCode): no traffic leaves
 * 127.0.0.1. The preset's decimals go through the start's check like a configured token's.
 */
import test from 'ava';
import { EVM_PRESETS } from '../../../../src/chains/evm/presets';
import { killAllAnvils, startAnvil } from '../../../helpers/anvil';
import { until } from '../../../helpers/cli';
import { startTestDaemon } from '../../../helpers/daemon';
import { FAST_WATCH } from './evm-fixture';

test.after.always(killAllAnvils);

const BSC = EVM_PRESETS.bsc!;
const [BSC_USDT, BSC_USDC] = BSC.tokens.map((t) => t.contract) as [string, string];

/** Runtime code that answers every call with the 32-byte word `n`: decimals() as a token says it. */
const answering = (n: number) => `0x60${n.toString(16).padStart(2, '0')}60005260206000f3`;

async function bscNode() {
  const { node } = await startAnvil({ chainId: BSC.chain_id });
  await node.rpc('anvil_setCode', [BSC_USDT, answering(18)]);
  await node.rpc('anvil_setCode', [BSC_USDC, answering(18)]);
  return node;
}

test('a BSC chain from its preset serves BNB, USDT and USDC with 18 decimals in GET /v1/currencies, and reads its node', async (t) => {
  const node = await bscNode();
  const td = await startTestDaemon({ chains: [{ preset: 'bsc', rpc_url: node.rpcUrl, options: FAST_WATCH }] });
  t.teardown(() => td.stop());
  const chain = td.daemon.config.chains[0]!;
  t.like(chain, { id: 'bsc', chain_id: 56, confirmations: 15 });
  t.is(chain.evm!.fee_model, 'legacy');
  // Out of maintenance once the chain's node answered as BSC (chain id 56).
  const items = await until(
    async () => {
      const res = await fetch(`${td.url}/v1/currencies`);
      const body = (await res.json()) as { items: Array<Record<string, unknown>> };
      return body.items.every((i) => i.maintenance === false) ? body.items : null;
    },
    15_000,
    'the bsc coins out of maintenance',
  );
  t.deepEqual(
    items.map((i) => [i.network, i.ticker, i.name, i.decimals, i.invoice_enabled]),
    [
      ['bsc', 'BNB', 'BNB', 18, true],
      ['bsc', 'USDT', 'Tether USD', 18, true],
      ['bsc', 'USDC', 'USD Coin', 18, true],
    ],
  );
});

test("a preset's token whose contract says other decimals stops the daemon with one line naming the preset; a given figure is named by its key", async (t) => {
  const node = await bscNode();
  await node.rpc('anvil_setCode', [BSC_USDT, answering(6)]);
  await t.throwsAsync(startTestDaemon({ chains: [{ preset: 'bsc', rpc_url: node.rpcUrl, options: FAST_WATCH }] }), {
    message: `chains[0].preset: bsc USDT is configured with 18 decimals, its contract ${BSC_USDT} says 6`,
  });
  await node.rpc('anvil_setCode', [BSC_USDT, answering(18)]);
  await t.throwsAsync(
    startTestDaemon({
      chains: [
        {
          preset: 'bsc',
          rpc_url: node.rpcUrl,
          options: FAST_WATCH,
          tokens: [
            { ticker: 'USDC', omit: true },
            { ticker: 'USDT', decimals: 6 },
          ],
        },
      ],
    }),
    { message: `chains[0].tokens[1].decimals: bsc USDT is configured with 6 decimals, its contract ${BSC_USDT} says 18` },
  );
});

test("a preset chain given a local chain id (anvil as it comes) takes the override and keeps the preset's coins", async (t) => {
  const { node } = await startAnvil();
  await node.rpc('anvil_setCode', [BSC_USDT, answering(18)]);
  await node.rpc('anvil_setCode', [BSC_USDC, answering(18)]);
  const td = await startTestDaemon({ chains: [{ id: 'bsc-local', preset: 'bsc', chain_id: 31337, rpc_url: node.rpcUrl, options: FAST_WATCH }] });
  t.teardown(() => td.stop());
  const items = await until(
    async () => {
      const body = (await (await fetch(`${td.url}/v1/currencies`)).json()) as { items: Array<Record<string, unknown>> };
      return body.items.every((i) => i.maintenance === false) ? body.items : null;
    },
    15_000,
    'the coins out of maintenance',
  );
  t.deepEqual(
    items.map((i) => [i.network, i.ticker, i.decimals]),
    [
      ['bsc-local', 'BNB', 18],
      ['bsc-local', 'USDT', 18],
      ['bsc-local', 'USDC', 18],
    ],
  );
});
