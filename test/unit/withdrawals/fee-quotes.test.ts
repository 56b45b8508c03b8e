import test from 'ava';
import { NodeUnavailable, type ChainSender, type FeeQuote } from '../../../src/chains/types';
import { FEE_QUOTE_FALLBACK_MS, FEE_QUOTE_TTL_MS, FeeQuotes } from '../../../src/withdrawals/fee-quotes';

/** A sender that counts its node calls; `next` decides the answer of the next one. */
function countingSender() {
  const s = {
    calls: 0,
    next: (): Promise<FeeQuote> => Promise.resolve({ kind: 'btc', satPerVbyte: 10 + s.calls, source: 'node' }),
    feeQuote(): Promise<FeeQuote> {
      s.calls++;
      return s.next();
    },
  };
  return s as typeof s & ChainSender;
}

test('one node call per sender within the TTL; a new one after it', async (t) => {
  let now = 1_000_000;
  const quotes = new FeeQuotes(() => now);
  const sender = countingSender();
  const a = await quotes.quote(sender);
  now += FEE_QUOTE_TTL_MS - 1;
  t.deepEqual(await quotes.quote(sender), a);
  t.is(sender.calls, 1);
  now += 1;
  t.deepEqual(await quotes.quote(sender), { kind: 'btc', satPerVbyte: 12, source: 'node' });
  t.is(sender.calls, 2);
});

test('concurrent requests share one call in flight', async (t) => {
  const quotes = new FeeQuotes(() => 0);
  const sender = countingSender();
  const all = await Promise.all(Array.from({ length: 20 }, () => quotes.quote(sender)));
  t.is(sender.calls, 1);
  t.true(all.every((q) => q === all[0]));
});

test('a failed call is not kept: the next request asks the node again', async (t) => {
  const quotes = new FeeQuotes(() => 0);
  const sender = countingSender();
  const ok = sender.next;
  sender.next = () => Promise.reject(new Error('estimatesmartfee failed'));
  await t.throwsAsync(quotes.quote(sender), { message: 'estimatesmartfee failed' });
  sender.next = ok;
  t.is(((await quotes.quote(sender)) as { satPerVbyte: number }).satPerVbyte, 12);
  t.is(sender.calls, 2);
});

test('a clock that goes back does not keep an old quote', async (t) => {
  let now = 10_000;
  const quotes = new FeeQuotes(() => now);
  const sender = countingSender();
  await quotes.quote(sender);
  now -= 1;
  await quotes.quote(sender);
  t.is(sender.calls, 2);
});

test('while the node cannot answer now (rate limited), the last quote serves up to a minute; then, or on another error, the request fails', async (t) => {
  let now = 1_000_000;
  const quotes = new FeeQuotes(() => now);
  const sender = countingSender();
  const first = await quotes.quote(sender);
  const ok = sender.next;
  sender.next = () => Promise.reject(new NodeUnavailable('evm node eth_feeHistory: HTTP 429', 1000, true));
  now += FEE_QUOTE_FALLBACK_MS - 1;
  t.deepEqual(await quotes.quote(sender), first, 'the last quote while rate limited');
  now += 1;
  await t.throwsAsync(quotes.quote(sender), { instanceOf: NodeUnavailable }, 'too old to price a reserve');
  now -= 10_000;
  sender.next = () => Promise.reject(new Error('eth_feeHistory: invalid answer'));
  await t.throwsAsync(quotes.quote(sender), { message: 'eth_feeHistory: invalid answer' }, 'not node trouble: no fallback');
  sender.next = ok;
  t.not(await quotes.quote(sender), first);
});
