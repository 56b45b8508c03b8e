/**
 * A chain transfer's status as the chain shows it (ARCHITECTURE "One chain core": the watcher
 * counts confirmations and detects reorganisations; the recorder decides seen / confirmed /
 * reverted), and which observed transfers are the wallet's.
 */
import test from 'ava';
import { deepestConfirmed, observedAgain, originOf, promoted, reverted, transferStatus } from '../../../src/chains/transfer-state';
import type { IncomingObservation, OutgoingObservation } from '../../../src/chains/types';
import type { AddressRow, ChainTransferRow } from '../../../src/db/entities/chain';

const NOW = '2026-03-01T00:10:00.000Z';
const BEFORE = '2026-03-01T00:00:00.000Z';

const transfer = (over: Partial<ChainTransferRow> = {}): ChainTransferRow => ({
  id: 'ct1',
  chain_id: 'ethereum',
  coin_id: 'eth',
  txid: '0xabc',
  output_index: 0,
  direction: 'incoming',
  purpose: 'invoice',
  address: '0xa11ce',
  address_id: 'addr1',
  account_id: 'acc',
  amount: '1',
  spent_transfer_id: null,
  nonce: null,
  block_height: 10,
  block_hash: '0xb10',
  confirmations: 1,
  status: 'seen',
  seen_at: BEFORE,
  confirmed_at: null,
  reverted_at: null,
  created_at: BEFORE,
  updated_at: BEFORE,
  ...over,
});

const inBlock = (height: number, confirmations: number, hash = `0xb${height}`) => ({ blockHeight: height, blockHash: hash, confirmations });
const inMempool = { blockHeight: null, blockHash: null, confirmations: 0 };

test("a transfer in a block with the chain's confirmations is confirmed; in a younger block or the mempool it is seen", (t) => {
  t.is(transferStatus(inBlock(10, 3), 3), 'confirmed');
  t.is(transferStatus(inBlock(10, 2), 3), 'seen');
  t.is(transferStatus(inMempool, 0), 'seen', 'the mempool never confirms, whatever the chain asks');
});

test('seen again deeper, a transfer becomes confirmed once, with the time it got there', (t) => {
  const next = observedAgain(transfer(), inBlock(10, 3), 3, NOW)!;
  t.like(next, { status: 'confirmed', confirmations: 3, confirmed_at: NOW, updated_at: NOW, block_height: 10 });
  const again = observedAgain(next, inBlock(10, 4), 3, '2026-03-01T00:20:00.000Z')!;
  t.like(again, { status: 'confirmed', confirmations: 4, confirmed_at: NOW }, 'confirmed_at is when it first got there');
});

test('a confirmed transfer echoed by the mempool changes nothing; seen in another block it stays confirmed at the block the chain shows', (t) => {
  const confirmed = transfer({ status: 'confirmed', confirmations: 3, confirmed_at: BEFORE });
  t.is(observedAgain(confirmed, inMempool, 3, NOW), null);
  t.like(observedAgain(confirmed, inBlock(11, 1, '0xother'), 3, NOW), {
    status: 'confirmed',
    block_height: 11,
    block_hash: '0xother',
    confirmations: 1,
    confirmed_at: BEFORE,
  });
});

test('a reverted transfer included again is live again: seen or confirmed as its depth says, no longer marked reverted', (t) => {
  const gone = transfer({ status: 'reverted', confirmations: 0, reverted_at: BEFORE, block_height: null, block_hash: null });
  t.like(observedAgain(gone, inBlock(12, 1), 3, NOW), { status: 'seen', reverted_at: null, confirmed_at: null, block_height: 12 });
  t.like(observedAgain(gone, inBlock(12, 3), 3, NOW), { status: 'confirmed', reverted_at: null, confirmed_at: NOW });
});

test('a block is deep enough at the tip less the confirmations asked, plus one; the tip itself when none are asked', (t) => {
  t.is(deepestConfirmed(100, 6), 95);
  t.is(deepestConfirmed(100, 1), 100);
  t.is(deepestConfirmed(100, 0), 100);
});

test('a seen transfer whose block became deep enough is confirmed with its depth at the tip', (t) => {
  t.like(promoted(transfer({ block_height: 95 }), 100, NOW), { status: 'confirmed', confirmations: 6, confirmed_at: NOW, updated_at: NOW });
});

test('a transfer the chain no longer holds is reverted with no confirmations, once', (t) => {
  t.like(reverted(transfer({ status: 'confirmed', confirmations: 7 }), NOW), { status: 'reverted', confirmations: 0, reverted_at: NOW, updated_at: NOW });
  t.is(reverted(transfer({ status: 'reverted' }), NOW), null);
});

const address = (over: Partial<AddressRow> = {}): AddressRow =>
  ({ id: 'addr1', account_id: 'acc', chain_id: 'ethereum', coin_id: 'eth', address: '0xa11ce', purpose: 'invoice', ...over }) as AddressRow;
const payment: IncomingObservation = {
  chainId: 'ethereum',
  coinId: 'eth',
  txid: '0xabc',
  index: 0,
  address: '0xa11ce',
  addressId: 'addr1',
  amount: '1.5',
  ...inBlock(10, 1),
};

test("a payment to a wallet address is the wallet's, booked to the address's account and purpose with its amount", (t) => {
  t.deepEqual(originOf(payment, address(), undefined), {
    purpose: 'invoice',
    address: '0xa11ce',
    address_id: 'addr1',
    account_id: 'acc',
    amount: '1.5',
    spent_transfer_id: null,
    nonce: null,
  });
});

test("a payment is not the wallet's when the address row is missing, of another chain, or not the address paid", (t) => {
  t.is(originOf(payment, undefined, undefined), null);
  t.is(originOf(payment, address({ chain_id: 'base' }), undefined), null);
  t.is(originOf(payment, address({ address: '0xb0b' }), undefined), null);
});

test('a configured coin where it was not asked for is a stray (PRODUCT §17): another chain sharing the address, or another coin than the address', (t) => {
  const evm = (a: string, b: string) => a === b || (a !== 'tron' && b !== 'tron');
  // Another chain of the address's group: a stray of the invoice's address; of another group: not the wallet's.
  t.like(originOf(payment, address({ chain_id: 'base' }), undefined, evm), { purpose: 'stray', address_id: 'addr1', account_id: 'acc', amount: '1.5' });
  t.is(originOf({ ...payment, chainId: 'tron' }, address(), undefined, evm), null);
  // Another coin on the address's own chain: a stray, for an invoice's or a static address.
  t.like(originOf({ ...payment, coinId: 'usdc' }, address(), undefined), { purpose: 'stray' });
  t.like(originOf({ ...payment, coinId: 'usdc' }, address({ purpose: 'static' }), undefined), { purpose: 'stray' });
  // A treasury takes any coin of its own chain (top-ups) and nothing of another chain.
  t.like(originOf({ ...payment, coinId: 'usdc' }, address({ purpose: 'treasury' }), undefined, evm), { purpose: 'treasury' });
  t.is(originOf(payment, address({ purpose: 'treasury', chain_id: 'base' }), undefined, evm), null);
});

test("a transaction sent from a wallet address is the wallet's spend, with its nonce and no amount of its own", (t) => {
  const sent: OutgoingObservation = {
    chainId: 'ethereum',
    coinId: 'eth',
    txid: '0xdef',
    index: 0,
    direction: 'outgoing',
    from: '0xa11ce',
    addressId: 'addr1',
    nonce: 7,
    ...inBlock(10, 1),
  };
  t.like(originOf(sent, address({ purpose: 'treasury' }), undefined), { purpose: 'treasury', amount: '0', nonce: 7, spent_transfer_id: null });
  t.is(originOf({ ...sent, from: '0xb0b' }, address(), undefined), null);
});

test("a Bitcoin input is the wallet's when it spends a live output the wallet received, and carries that output's address and amount", (t) => {
  const input: OutgoingObservation = {
    chainId: 'bitcoin',
    coinId: 'btc',
    txid: 'spend',
    index: 0,
    direction: 'outgoing',
    outpoint: { txid: 'abc', index: 1 },
    ...inBlock(10, 1),
  };
  const output = transfer({
    id: 'out1',
    chain_id: 'bitcoin',
    coin_id: 'btc',
    purpose: 'static',
    address: 'bcrt1q',
    address_id: 'a9',
    amount: '0.3',
    status: 'confirmed',
  });
  t.deepEqual(originOf(input, undefined, output), {
    purpose: 'static',
    address: 'bcrt1q',
    address_id: 'a9',
    account_id: 'acc',
    amount: '0.3',
    spent_transfer_id: 'out1',
    nonce: null,
  });
  t.is(originOf(input, undefined, { ...output, status: 'reverted' }), null, 'an output the chain took back spends nothing of the wallet');
  t.is(originOf(input, undefined, undefined), null);
});
