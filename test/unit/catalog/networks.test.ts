import test from 'ava';
import { networkLabel, type NamedChain } from '../../../src/catalog/networks';

const evm = (c: Partial<NamedChain>): NamedChain => ({ id: 'evm1', kind: 'evm', chain_id: 999_999, ...c });

test('Tron is "Tron" with TRC-20 tokens; its testnets say so', (t) => {
  t.deepEqual(networkLabel({ id: 'tron', kind: 'tron' }), { name: 'Tron', token_standard: 'TRC-20' });
  t.deepEqual(networkLabel({ id: 'tron', kind: 'tron', network: 'mainnet' }), { name: 'Tron', token_standard: 'TRC-20' });
  t.deepEqual(networkLabel({ id: 'tron-test', kind: 'tron', network: 'nile' }), { name: 'Tron Nile testnet', token_standard: 'TRC-20' });
  t.is(networkLabel({ id: 't', kind: 'tron', network: 'shasta' }).name, 'Tron Shasta testnet');
});

test('Bitcoin is "Bitcoin" on mainnet and names its test networks', (t) => {
  t.deepEqual(networkLabel({ id: 'btc', kind: 'btc', network: 'mainnet' }), { name: 'Bitcoin', token_standard: null });
  t.is(networkLabel({ id: 'btc', kind: 'btc', network: 'testnet' }).name, 'Bitcoin testnet');
  t.is(networkLabel({ id: 'btc', kind: 'btc', network: 'signet' }).name, 'Bitcoin signet');
  t.is(networkLabel({ id: 'bitcoin', kind: 'btc', network: 'regtest' }).name, 'Bitcoin regtest');
});

test('an EVM chain is named by its EIP-155 chain id: ERC-20 on Ethereum, BEP-20 on BNB Smart Chain, no standard on the others', (t) => {
  t.deepEqual(networkLabel(evm({ chain_id: 1 })), { name: 'Ethereum', token_standard: 'ERC-20' });
  t.deepEqual(networkLabel(evm({ chain_id: 56 })), { name: 'BNB Smart Chain', token_standard: 'BEP-20' });
  t.deepEqual(networkLabel(evm({ chain_id: 8453 })), { name: 'Base', token_standard: null });
  t.deepEqual(networkLabel(evm({ chain_id: 42161 })), { name: 'Arbitrum One', token_standard: null });
  t.deepEqual(networkLabel(evm({ chain_id: 10 })), { name: 'OP Mainnet', token_standard: null });
  t.deepEqual(networkLabel(evm({ chain_id: 137 })), { name: 'Polygon PoS', token_standard: null });
  t.deepEqual(networkLabel(evm({ chain_id: 43114 })), { name: 'Avalanche C-Chain', token_standard: null });
  t.deepEqual(networkLabel(evm({ chain_id: 11155111 })), { name: 'Ethereum Sepolia', token_standard: 'ERC-20' });
  t.deepEqual(networkLabel(evm({ chain_id: 97 })), { name: 'BNB Smart Chain Testnet', token_standard: 'BEP-20' });
  t.is(networkLabel(evm({ chain_id: 84532 })).name, 'Base Sepolia');
});

test('a preset names the network before the chain id; a config id that is a preset name names a local chain; else the id as written', (t) => {
  t.deepEqual(networkLabel(evm({ preset: 'base', chain_id: 31337 })), { name: 'Base', token_standard: null });
  t.deepEqual(networkLabel(evm({ id: 'ethereum', chain_id: 31337 })), { name: 'Ethereum', token_standard: 'ERC-20' });
  t.deepEqual(networkLabel(evm({ id: 'bsc', chain_id: 31338 })), { name: 'BNB Smart Chain', token_standard: 'BEP-20' });
  // The chain id the node is checked against wins over a config id that names another network.
  t.is(networkLabel(evm({ id: 'base', chain_id: 1 })).name, 'Ethereum');
  t.deepEqual(networkLabel(evm({ id: 'my-l2', chain_id: 31337 })), { name: 'my-l2', token_standard: null });
  // Names every object has are no network.
  t.deepEqual(networkLabel(evm({ id: 'constructor', preset: '__proto__' })), { name: 'constructor', token_standard: null });
});

test("the config's own display name wins, keeping the known network's token standard", (t) => {
  t.deepEqual(networkLabel(evm({ chain_id: 56, name: 'BSC' })), { name: 'BSC', token_standard: 'BEP-20' });
  t.deepEqual(networkLabel({ id: 'tron', kind: 'tron', name: 'TRON' }), { name: 'TRON', token_standard: 'TRC-20' });
  t.is(networkLabel(evm({ id: 'my-l2', name: '  ' })).name, 'my-l2');
});
