import test from 'ava';
import { parseConfig } from '../../../src/config/schema';

const btc = (extra: Record<string, unknown> = {}) => ({ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:1', ...extra });
const evm = (extra: Record<string, unknown> = {}) => ({ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:1', ...extra });
const tron = (extra: Record<string, unknown> = {}) => ({ id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:1', ...extra });
const chains = (input: Record<string, unknown>) => parseConfig(input).chains;

test("every chain has a fee ceiling: by default 500 sat/vB, 500 gwei a gas, 100 TRX a transfer; payouts.max_fee sets it in the chain's unit", (t) => {
  t.deepEqual(
    chains({ chains: [btc(), evm(), tron()] }).map((c) => c.payouts.max_fee),
    [500n, 500_000_000_000n, 100_000_000n],
  );
  const set = chains({ chains: [btc({ payouts: { max_fee: 80 } }), evm({ payouts: { max_fee: '0.05' } }), tron({ payouts: { max_fee: 12.5 } })] });
  t.deepEqual(
    set.map((c) => c.payouts.max_fee),
    [80n, 50_000_000n, 12_500_000n],
  );
});

test('replace_after_blocks may be set per chain; a chain without one takes payouts.replace_after_blocks', (t) => {
  const cs = chains({
    payouts: { replace_after_blocks: 4 },
    chains: [btc({ payouts: { replace_after_blocks: 1 } }), evm({ payouts: { replace_after_blocks: 40 } }), tron()],
  });
  t.deepEqual(
    cs.map((c) => c.payouts.replace_after_blocks),
    [1, 40, 4],
  );
  t.is(chains({ chains: [evm()] })[0]!.payouts.replace_after_blocks, 6);
});

test('a Bitcoin ceiling stays within what Bitcoin Core relays; options.fee_max_sat_vb is its older name, and the fallback fits under it', (t) => {
  t.is(chains({ chains: [btc({ payouts: { max_fee: 10_000 } })] })[0]!.payouts.max_fee, 10_000n);
  t.is(chains({ chains: [btc({ options: { fee_max_sat_vb: 700 } })] })[0]!.payouts.max_fee, 700n);
  t.is(chains({ chains: [btc({ options: { fee_max_sat_vb: 700 }, payouts: { max_fee: 700 } })] })[0]!.payouts.max_fee, 700n);
  t.is(chains({ chains: [btc({ options: { fee_fallback_sat_vb: 800 } })] })[0]!.payouts.max_fee, 800n, 'the default ceiling is never under the fallback');
});

for (const [input, message] of [
  [
    { chains: [btc({ payouts: { max_fee: 10_001 } })] },
    'chains[0].payouts.max_fee: must be at most 10000 sat/vB: Bitcoin Core refuses transactions above its default maxfeerate (0.10 BTC/kvB)',
  ],
  [
    { chains: [btc({ options: { fee_max_sat_vb: 100_000 } })] },
    'chains[0].options.fee_max_sat_vb: must be at most 10000 sat/vB: Bitcoin Core refuses transactions above its default maxfeerate (0.10 BTC/kvB)',
  ],
  [{ chains: [btc({ payouts: { max_fee: 12.5 } })] }, 'chains[0].payouts.max_fee: must be an integer from 1 to 10000'],
  [
    { chains: [btc({ payouts: { max_fee: 300 }, options: { fee_max_sat_vb: 400 } })] },
    'chains[0].payouts.max_fee: differs from chains[0].options.fee_max_sat_vb, its older name: give one',
  ],
  [
    { chains: [btc({ payouts: { max_fee: 5 }, options: { fee_fallback_sat_vb: 6 } })] },
    'chains[0].payouts.max_fee: must be at least chains[0].options.fee_fallback_sat_vb (6)',
  ],
  [{ chains: [btc({ options: { fee_fallback_sat_vb: 20_000 } })] }, 'chains[0].options.fee_fallback_sat_vb: must be an integer from 1 to 10000'],
  [{ chains: [evm({ payouts: { max_fee: 0 } })] }, 'chains[0].payouts.max_fee: must be an amount of gwei above 0'],
  [{ chains: [evm({ payouts: { max_fee: '0.0000000001' } })] }, 'chains[0].payouts.max_fee: must be an amount of gwei (0 or more, at most 9 decimals)'],
  [{ chains: [tron({ payouts: { max_fee: -1 } })] }, 'chains[0].payouts.max_fee: must be an amount of TRX (0 or more, at most 6 decimals)'],
  [{ chains: [tron({ payouts: { max_fee: 10 }, sweep: { max_burn: 20 } })] }, 'chains[0].sweep.max_burn: must not be above payouts.max_fee (10 TRX)'],
  [{ chains: [evm({ payouts: { replace_after_blocks: 0 } })] }, 'chains[0].payouts.replace_after_blocks: must be an integer from 1 to 1008'],
  [{ chains: [evm({ payouts: { max_fees: 1 } })] }, 'chains[0].payouts.max_fees: unknown key'],
] as const) {
  test(`a bad fee ceiling is refused at load with one line: ${message}`, (t) => {
    t.throws(() => parseConfig(input), { message });
  });
}

test('payouts.enabled: false is accepted (PRODUCT §8a); it defaults to true and takes only true or false', (t) => {
  t.false(parseConfig({ payouts: { enabled: false } }).payouts.enabled);
  t.true(parseConfig({}).payouts.enabled);
  t.throws(() => parseConfig({ payouts: { enabled: 'no' } }), { message: 'payouts.enabled: must be true or false' });
});
