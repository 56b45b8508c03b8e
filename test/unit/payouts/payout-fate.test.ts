/**
 * PRODUCT §14: a payout fails only on proof. Its fate read from the chain core's blocks, and what a
 * node's answer to a broadcast may prove, as pure decisions.
 */
import test from 'ava';
import { afterRefusal, broadcastOutcome, finalHeight, payoutFate, replacementStep } from '../../../src/payouts/payout-fate';
import type { PayoutEvidence } from '../../../src/payouts/payout-evidence';

const none: PayoutEvidence = { mined: null, rival: null, scanned: 100 };
const noCancel = new Set<string>();

test('a candidate in a scanned block is mined at its depth, whatever else is known; the cancel mined is told apart', (t) => {
  const ev: PayoutEvidence = { mined: { txid: 'a', height: 98, confirmations: 3 }, rival: null, scanned: 100 };
  t.deepEqual(payoutFate(ev, noCancel, true), { step: 'mined', txid: 'a', confirmations: 3 });
  t.deepEqual(payoutFate(ev, new Set(['a']), false), { step: 'cancel_mined' });
});

test("another transaction using what it spends, confirmed in the core's blocks, proves it dead", (t) => {
  t.deepEqual(payoutFate({ ...none, rival: 'r' }, noCancel, false), { step: 'taken' });
});

test('an expiration passed under a final block proves a Tron payout dead; otherwise nothing is proven and it is sent again', (t) => {
  t.deepEqual(payoutFate(none, noCancel, true), { step: 'expired' });
  t.deepEqual(payoutFate(none, noCancel, false), { step: 'send' });
});

test('the node holding it is held; a refusal about the transaction proves it dead only while no node ever held it and no cancel was asked', (t) => {
  const fresh = { status: 'signed' as const, held: false, cancelling: false };
  t.is(broadcastOutcome({ sent: true, refused: false }, fresh), 'held');
  t.is(broadcastOutcome({ sent: false, refused: true }, fresh), 'dead');
  t.is(broadcastOutcome({ sent: false, refused: true }, { ...fresh, held: true }), 'nothing', 'it spread once: a refusal now proves nothing');
  t.is(broadcastOutcome({ sent: false, refused: true }, { ...fresh, status: 'broadcast', held: true }), 'nothing');
  t.is(broadcastOutcome({ sent: false, refused: true }, { ...fresh, cancelling: true }), 'nothing', 'the cancel decides');
});

test('busy, rate-limited, unreachable or unsure answers never fail a payout, however often', (t) => {
  for (const status of ['signed', 'broadcast'] as const) {
    for (let i = 0; i < 100; i++) t.is(broadcastOutcome({ sent: false, refused: false }, { status, held: false, cancelling: false }), 'nothing');
  }
});

test('a candidate proven dead is signed anew where the rail can renew it; else a batch goes out one by one and a single withdrawal fails', (t) => {
  t.is(afterRefusal(true, 1), 'renew');
  t.is(afterRefusal(true, 5), 'renew');
  t.is(afterRefusal(false, 5), 'split');
  t.is(afterRefusal(false, 1), 'fail');
});

test('a broadcast payout waiting replace_after_blocks since its broadcast is replaced with a higher fee; back from a reorganisation its wait starts again', (t) => {
  const broadcast = { status: 'broadcast' as const, broadcastHeight: 100, cancelling: false };
  t.is(replacementStep(broadcast, 105, 6), 'wait');
  t.is(replacementStep(broadcast, 106, 6), 'replace');
  t.is(replacementStep({ ...broadcast, broadcastHeight: null }, 106, 6), 'restart_wait');
});

test('a payout still signed, or being cancelled, is never replaced', (t) => {
  t.is(replacementStep({ status: 'signed', broadcastHeight: 1, cancelling: false }, 1000, 6), 'wait');
  t.is(replacementStep({ status: 'broadcast', broadcastHeight: 1, cancelling: true }, 1000, 6), 'wait');
});

test('an expiration is proven only under a block the chain core holds final: its confirmations deep, at least one', (t) => {
  t.is(finalHeight(100, 19), 82);
  t.is(finalHeight(100, 1), 100);
  t.is(finalHeight(100, 0), 100);
  t.is(finalHeight(5, 19), null);
  t.is(finalHeight(null, 1), null, 'nothing scanned yet');
});
