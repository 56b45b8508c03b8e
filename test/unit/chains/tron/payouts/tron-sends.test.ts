/**
 * When a Tron transaction can never be mined (src/payouts/tron/tron-sends.ts): only once a block at
 * the chain's confirmations is at or past its expiration, never on the head block alone (a
 * reorganisation could still bring a branch that mines it).
 */
import test from 'ava';
import { expiredForGood } from '../../../../../src/chains/tron/payouts/tron-sends';

/** Block n at 3 s a block from 0. */
const chain = { blockTime: async (h: number) => h * 3000 };

test('expired for good only once the block at the confirmations is at or past the expiration', async (t) => {
  const expiration = 30_000; // block 10's time
  t.false(await expiredForGood(chain, 3, 10, expiration), 'the head reached it: not final yet');
  t.false(await expiredForGood(chain, 3, 11, expiration));
  t.true(await expiredForGood(chain, 3, 12, expiration), 'block 10 is 3 deep');
  t.false(await expiredForGood(chain, 19, 27, expiration));
  t.true(await expiredForGood(chain, 19, 28, expiration), "Tron's solidified depth");
  t.true(await expiredForGood(chain, 0, 10, expiration), 'no confirmations: the head block decides');
  t.false(await expiredForGood(chain, 3, 1, expiration), 'a chain shorter than the confirmations');
});
