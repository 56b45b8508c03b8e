import test from 'ava';
import { EvmAdapter } from '../../../../../src/chains/evm/evm-adapter';
import { ConfigError, parseConfig } from '../../../../../src/config/schema';
import { evmNonceTaken as nonceTakenError } from '../../../../../src/chains/evm/refusal';

const entry = (extra: Record<string, unknown> = {}) => ({
  id: 'ethereum',
  kind: 'evm',
  chain_id: 1,
  rpc_url: 'http://127.0.0.1:1',
  tokens: [{ ticker: 'USDT', contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 }],
  ...extra,
});
const adapter = new EvmAdapter(parseConfig({ chains: [entry()] }).chains[0]!);

test('a destination is payable when it is 40 hex digits: EIP-55 mixed case must check, all lower or all upper case carries no checksum', (t) => {
  const good = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
  t.true(adapter.payable(good));
  t.true(adapter.payable(good.toLowerCase()));
  t.true(adapter.payable(`0x${good.slice(2).toUpperCase()}`));
  t.false(adapter.payable('0xDAC17F958D2ee523a2206206994597C13D831ec7'), 'one letter of the checksum wrong');
  for (const bad of [
    '',
    '0x',
    'dAC17F958D2ee523a2206206994597C13D831ec7',
    '0xdAC17F958D2ee523a2206206994597C13D831ec',
    '0xgAC17F958D2ee523a2206206994597C13D831ec7',
    ' 0xdac17f958d2ee523a2206206994597c13d831ec7',
  ])
    t.false(adapter.payable(bad), bad);
  t.is(adapter.canonicalAddress(good.toLowerCase()), good);
});

test('node refusals that mean the nonce is used are told apart from others', (t) => {
  for (const m of ['nonce too low', 'evm node eth_sendRawTransaction: nonce too low: next nonce 5, tx nonce 4', 'replacement transaction underpriced'])
    t.true(nonceTakenError(m), m);
  for (const m of ['insufficient funds for gas * price + value', 'evm node eth_sendRawTransaction: timed out', 'intrinsic gas too low'])
    t.false(nonceTakenError(m), m);
});

test('sweep minimums are per ticker of the chain, and only evm chains have them', (t) => {
  t.deepEqual(parseConfig({ chains: [entry({ sweep: { min: { ETH: '0.01', USDT: 5 } } })] }).chains[0]!.evm, {
    sweep_min: { ETH: '0.01', USDT: '5' },
    fee_model: 'eip1559',
  });
  t.deepEqual(parseConfig({ chains: [entry()] }).chains[0]!.evm, { sweep_min: {}, fee_model: 'eip1559' });
  t.throws(() => parseConfig({ chains: [entry({ sweep: { min: { BTC: '1' } } })] }), { instanceOf: ConfigError, message: /chains\[0\]\.sweep\.min\.BTC/ });
  t.throws(() => parseConfig({ chains: [entry({ sweep: { min: { ETH: '-1' } } })] }), { instanceOf: ConfigError });
  t.throws(() => parseConfig({ chains: [entry({ sweep: { every: 1 } })] }), { instanceOf: ConfigError, message: /sweep\.every: unknown key/ });
  t.throws(() => parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:1', sweep: { min: {} } }] }), {
    instanceOf: ConfigError,
    message: /sweep: is for evm and tron chains only/,
  });
});
