import test from 'ava';
import { btcNetwork } from '../../../src/chains/btc/derive';
import { parseConfig } from '../../../src/config/schema';

const btc = (options?: unknown) =>
  parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443', options }] }).chains[0]!;

test('a btc chain takes address overrides (bcoin regtest) in its options', (t) => {
  const chain = btc({ bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a, poll_interval_ms: 100 });
  t.like(btcNetwork(chain), { bech32: 'rb', pubKeyHash: 0x3c, scriptHash: 0x26, wif: 0x5a });
  t.like(btcNetwork(btc()), { bech32: 'bcrt' });
});

for (const [options, message] of [
  [{ bech32: 'RB' }, 'chains[0].options.bech32: must be 1 to 20 lower-case letters'],
  [{ bech32: 5 }, 'chains[0].options.bech32: must be a non-empty string'],
  [{ wif: 256 }, 'chains[0].options.wif: must be an integer from 0 to 255'],
  [{ pub_key_hash: 'x' }, 'chains[0].options.pub_key_hash: must be an integer from 0 to 255'],
] as const) {
  test(`a bad btc address option is refused: ${message}`, (t) => {
    t.throws(() => btc(options), { message });
  });
}

test('address overrides are for btc chains only', (t) => {
  t.throws(() => parseConfig({ chains: [{ id: 'e', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', options: { bech32: 'rb' } }] }), {
    message: 'chains[0].options.bech32: unknown key',
  });
});
