/**
 * Coin selection on fixed sets: an exact match needs no change, else the largest coins pay with a
 * change above dust, a change too small to be worth an output goes to the fee, and coins that
 * cannot pay are refused.
 */
import test from 'ava';
import { selectCoins, selectWithin } from '../../../../../src/chains/btc/payouts/coin-selection';
import { replacementFee } from '../../../../../src/chains/btc/payouts/replacement';
import { dustLimit, feeFor, P2WPKH_DUST } from '../../../../../src/chains/btc/tx-size';

const coins = (...values: number[]) => values.map((v, i) => ({ id: `c${i}`, value: BigInt(v) }));
// One P2WPKH payment: overhead 11 + output 31.
const BASE = 42;
const CHANGE = 31;
const req = (values: number[], target: number, rate = 1) => ({
  coins: coins(...values),
  target: BigInt(target),
  baseVsize: BASE,
  satPerVbyte: rate,
  changeVsize: CHANGE,
  changeDust: P2WPKH_DUST,
});

test('coins that match the payment and its fee exactly are chosen, with no change output', (t) => {
  // Two inputs at 1 sat/vB: 42 + 2 × 68 = 178 sat of fee; 30,000 + 20,178 pays 50,000 exactly.
  const s = selectCoins(req([100_000, 30_000, 20_178, 7_000], 50_000))!;
  t.is(s.method, 'exact');
  t.deepEqual(s.coins.map((c) => c.id).sort(), ['c1', 'c2']);
  t.is(s.change, 0n);
  t.is(s.fee, 178n);
  t.is(s.vsize, 178);
});

test('a near match leaves its small excess to the fee rather than making a change output', (t) => {
  // 30,000 + 20,200: 22 sat over, less than a change output costs (31 + 68 vbytes).
  const s = selectCoins(req([100_000, 30_000, 20_200], 50_000))!;
  t.is(s.method, 'exact');
  t.is(s.change, 0n);
  t.is(s.fee, 200n);
});

test('without an exact match the largest coins pay, and the change above dust returns to the account', (t) => {
  const s = selectCoins(req([5_000, 100_000, 60_000], 120_000, 2))!;
  t.is(s.method, 'largest_first');
  t.deepEqual(
    s.coins.map((c) => c.id),
    ['c1', 'c2'],
  );
  const vsize = BASE + 2 * 68 + CHANGE;
  t.is(s.vsize, vsize);
  t.is(s.fee, feeFor(vsize, 2));
  t.is(s.change, 160_000n - 120_000n - feeFor(vsize, 2));
  t.is(
    s.coins.reduce((a, c) => a + c.value, 0n),
    120_000n + s.fee + s.change,
  );
});

test('a change that would be dust goes to the fee', (t) => {
  // One coin at 5 sat/vB: 550 sat over the payment; a change output would keep 395 of them, less
  // than it costs to make and later spend (99 vB × 5), so all 550 pay the fee.
  const s = selectCoins(req([50_550], 50_000, 5))!;
  t.is(s.change, 0n);
  t.is(s.fee, 550n);
  t.true(s.fee >= feeFor(BASE + 68, 5));
});

test('coins that cannot pay the amount and the fee are refused', (t) => {
  t.is(selectCoins(req([10_000, 20_000], 30_000)), null);
  t.is(selectCoins(req([], 1_000)), null);
});

test('coins worth less than their own input fee are never chosen', (t) => {
  const s = selectCoins(req([60, 60, 60, 100_000], 50_000))!;
  t.deepEqual(
    s.coins.map((c) => c.id),
    ['c3'],
  );
});

test('branch-and-bound over thousands of coins finishes and still pays', (t) => {
  const values = Array.from({ length: 10_000 }, (_, i) => 10_000 + ((i * 7919) % 90_000));
  const s = selectCoins(req(values, 5_000_000, 3))!;
  t.truthy(s);
  t.is(
    s.coins.reduce((a, c) => a + c.value, 0n),
    5_000_000n + s.fee + s.change,
  );
  t.true(s.fee >= feeFor(s.vsize, 3));
});

test("a payout within what its withdrawals reserved goes out at the node's rate", (t) => {
  // One coin and change at 10 sat/vB: (42 + 68 + 31) × 10 = 1,410 sat.
  const s = selectWithin(req([100_000], 50_000, 10), 1_410n)!;
  t.is(s.satPerVbyte, 10);
  t.is(s.fee, 1_410n);
});

test("a payout the node's rate would make cost more than its withdrawals reserved goes out at the highest rate the reserve pays", (t) => {
  // Every coin, no change: 42 + 3 × 68 = 246 vbytes; the reserve was priced at 2 sat/vB, the node asks 10.
  const reserved = 492n;
  const s = selectWithin(req([30_000, 30_000, 40_492], 100_000, 10), reserved)!;
  t.is(s.satPerVbyte, 2);
  t.is(s.fee, reserved);
  t.is(s.change, 0n);
  t.is(selectCoins(req([30_000, 30_000, 40_492], 100_000, 10)), null, "at the node's rate the coins cannot pay");
});

test("when no rate keeps a payout within its reserve, it goes out at the node's rate, or at 1 sat/vB when the coins cannot pay that", (t) => {
  const s = selectWithin(req([100_000], 50_000, 10), 10n)!;
  t.is(s.satPerVbyte, 10);
  const low = selectWithin(req([50_200], 50_000, 10), 10n)!;
  t.is(low.satPerVbyte, 1);
  t.is(low.fee, 200n);
  t.is(selectWithin(req([50_000], 50_000, 10), 10n), null, 'coins that cannot pay even at 1 sat/vB');
});

test('the dust limit is 294 sat for P2WPKH and 546 for P2PKH', (t) => {
  t.is(dustLimit(Uint8Array.from([0, 20, ...new Uint8Array(20)])), 294n);
  t.is(dustLimit(Uint8Array.from([0x76, 0xa9, 20, ...new Uint8Array(20), 0x88, 0xac])), 546n);
});

const replaced = { inputsTotal: 100_000n, paymentsTotal: 80_000n, fee: 1_000n, vsize: 250, change: 19_000n, changeVsize: 31, changeDust: 294n };

test('a replacement pays the new rate, taken from the change', (t) => {
  t.deepEqual(replacementFee(replaced, 10), { change: 17_500n, fee: 2_500n, vsize: 250 });
});

test('a replacement pays at least the replaced fee plus the incremental relay rate over its size (BIP125)', (t) => {
  // 4 sat/vB would be exactly the old fee; BIP125 wants 1,000 + 250.
  t.deepEqual(replacementFee(replaced, 4), { change: 18_750n, fee: 1_250n, vsize: 250 });
});

test('a change that would become dust is dropped and what is left pays the fee', (t) => {
  const r = replacementFee({ ...replaced, change: 500n, inputsTotal: 81_500n }, 5)!;
  t.deepEqual(r, { change: 0n, fee: 1_500n, vsize: 219 });
});

test('a replacement the change cannot cover is refused', (t) => {
  t.is(replacementFee({ ...replaced, change: 500n, inputsTotal: 81_500n }, 50), null);
  t.is(replacementFee({ ...replaced, change: 0n, inputsTotal: 81_000n, vsize: 219 }, 5), null);
});
