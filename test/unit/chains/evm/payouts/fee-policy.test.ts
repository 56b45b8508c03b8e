import test from 'ava';
import { FeeCeiling } from '../../../../../src/payouts/fee-ceiling';
import { asked, fillerFees, newFees, replacementFees, type EvmQuote } from '../../../../../src/chains/evm/payouts/fee-policy';
import type { EvmFees } from '../../../../../src/chains/evm/payouts/evm-node';

const GWEI = 1_000_000_000n;
const clock = { now: () => new Date('2026-12-01T00:00:00.000Z') };
const ceilingOf = (gwei: bigint) => new FeeCeiling('ethereum', gwei * GWEI, (v) => `${v / GWEI} gwei`, clock);
/** What EvmAdapter.feeQuote answers for a base fee and a tip: a fee cap of twice the base fee plus the tip. */
const quote = (base: bigint, tip = 2n * GWEI): EvmQuote => ({ baseFeePerGas: base, maxPriorityFeePerGas: tip, maxFeePerGas: 2n * base + tip });

test('a new transaction pays the quote with its fee cap at most the ceiling; a quote asking more than the ceiling waits and names the chain', (t) => {
  const ceiling = ceilingOf(100n);
  t.deepEqual(newFees(ceiling, 'payouts', quote(10n * GWEI)), { maxFeePerGas: 22n * GWEI, maxPriorityFeePerGas: 2n * GWEI });
  // Room for the base fee to grow is cut at the ceiling: still mined now (60 + 2 ≤ 100).
  t.deepEqual(newFees(ceiling, 'payouts', quote(60n * GWEI)), { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 2n * GWEI });
  t.is(ceiling.status(), null);
  t.is(newFees(ceiling, 'payouts', quote(99n * GWEI)), null, '99 + 2 gwei is above the ceiling');
  t.is(newFees(ceiling, 'sweeps', quote(120n * GWEI)), null);
  t.deepEqual(ceiling.status(), {
    chain_id: 'ethereum',
    quote: '122 gwei',
    ceiling: '100 gwei',
    waiting: ['payouts', 'sweeps'],
    since: '2026-12-01T00:00:00.000Z',
  });
  t.truthy(newFees(ceiling, 'payouts', quote(50n * GWEI)));
  t.is(ceiling.status(), null, 'a quote under the ceiling again clears it');
});

test('a market that does not move gets no replacement: the payout offers what the node asks', (t) => {
  const ceiling = ceilingOf(500n);
  const market = quote(20n * GWEI);
  const sent = newFees(ceiling, 'payouts', market)!;
  t.is(replacementFees(ceiling, sent, market), null);
  // The base fee rose, but not past what the payout's fee cap pays with the market's tip.
  t.is(replacementFees(ceiling, sent, quote(39n * GWEI)), null);
  t.is(replacementFees(ceiling, sent, quote(30n * GWEI, 1n * GWEI)), null, 'a lower tip asked');
});

test('a market that rises gets one replacement at the quote, both caps at least a tenth and one wei above the replaced ones', (t) => {
  const ceiling = ceilingOf(500n);
  const sent = newFees(ceiling, 'payouts', quote(20n * GWEI))!;
  const risen = quote(45n * GWEI);
  t.true(asked(risen) > sent.maxFeePerGas);
  t.deepEqual(replacementFees(ceiling, sent, risen), {
    maxFeePerGas: 92n * GWEI,
    maxPriorityFeePerGas: sent.maxPriorityFeePerGas + sent.maxPriorityFeePerGas / 10n + 1n,
  });
  // A quote just past the offer: the replacement rule decides the caps, not the quote.
  const barely = replacementFees(ceiling, sent, { baseFeePerGas: 41n * GWEI, maxPriorityFeePerGas: 2n * GWEI, maxFeePerGas: 43n * GWEI })!;
  t.is(barely.maxFeePerGas, sent.maxFeePerGas + sent.maxFeePerGas / 10n + 1n);
  t.true(
    barely.maxFeePerGas * 100n >= sent.maxFeePerGas * 110n && barely.maxPriorityFeePerGas * 100n >= sent.maxPriorityFeePerGas * 110n,
    "geth's 10% on both",
  );
  // A zero tip still goes up (a node wants more than the replaced one on both caps).
  t.is(
    replacementFees(ceiling, { maxFeePerGas: 10n, maxPriorityFeePerGas: 0n }, { baseFeePerGas: 20n, maxPriorityFeePerGas: 0n, maxFeePerGas: 40n })!
      .maxPriorityFeePerGas,
    1n,
  );
});

test('60 rounds of a market rising an eighth a round never take a payout above the ceiling: at the ceiling it waits, named in coinkeep status', (t) => {
  const ceiling = ceilingOf(100n);
  let base = 2n * GWEI;
  let offer: EvmFees = newFees(ceiling, 'payouts', quote(base))!;
  let replacements = 0;
  for (let round = 0; round < 60; round++) {
    base += base / 8n;
    const next = replacementFees(ceiling, offer, quote(base));
    if (!next) continue;
    t.true(next.maxFeePerGas <= ceiling.max && next.maxPriorityFeePerGas <= next.maxFeePerGas, `round ${round}`);
    offer = next;
    replacements++;
  }
  t.true(offer.maxFeePerGas <= 100n * GWEI);
  t.true(replacements > 0 && replacements < 60, `${replacements} replacements`);
  t.like(ceiling.status(), { chain_id: 'ethereum', ceiling: '100 gwei', waiting: ['replacements'] });
  // The same market without a ceiling in reach: each replacement pays the quote, not 12.5% a round on top of the last.
  const open = ceilingOf(10_000_000n);
  base = 2n * GWEI;
  offer = newFees(open, 'payouts', quote(base))!;
  for (let round = 0; round < 60; round++) {
    base += base / 8n;
    offer = replacementFees(open, offer, quote(base)) ?? offer;
  }
  t.true(offer.maxFeePerGas <= 2n * base + 2n * GWEI + offer.maxFeePerGas / 10n, 'about the last quote');
});

test('a filler taking a given-back nonce pays its fees bumped by the replacement rule, at most the ceiling', (t) => {
  t.deepEqual(fillerFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, 1000n), { maxFeePerGas: 111n, maxPriorityFeePerGas: 12n });
  t.deepEqual(fillerFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 100n }, 105n), { maxFeePerGas: 105n, maxPriorityFeePerGas: 105n });
});
