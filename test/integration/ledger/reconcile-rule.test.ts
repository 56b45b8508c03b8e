/**
 * The rule of `ledger reconcile` (docs/decisions.md) on the daemon's own books, with the node's side
 * given: a withdrawal's hold still counts as in the wallet; while a withdrawal is broadcast the
 * chain may show less by up to its total_debit (`in_flight`, not a failure); a cent more is a
 * difference; a node that cannot be asked is `unavailable` and fails.
 */
import test from 'ava';
import type { HoldingsReader } from '../../../src/chains/types';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { reconcile } from '../../../src/ledger/reconcile';
import { COINS } from '../../helpers/invoice-fixture';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';

test('holds count as in the wallet; a broadcast withdrawal makes up to its total_debit in_flight; more is a difference; an unreachable node fails', async (t) => {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  let sats = 100_000_000n;
  let down = false;
  const reader: HoldingsReader = {
    holdings: async () => {
      if (down) throw new Error('bitcoin node gettxout: timed out after 10000 ms');
      return new Map([['native', sats]]);
    },
  };
  const run = async () => {
    const r = await reconcile({
      store: f.td.daemon.store,
      catalog: f.td.daemon.catalog,
      holdingsOf: (chainId) => (chainId === 'bitcoin' ? reader : { holdings: async (q) => new Map(q.assets.map((a) => [a, 0n])) }),
    });
    return { ok: r.ok, btc: r.coins.find((c) => c.coin_id === COINS.BTC)! };
  };

  t.like(await run(), { ok: true, btc: { books: '1', node: '1', difference: '0', in_flight_out: '0', status: 'ok' } });
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  t.is(w.status, 201);
  t.like(await run(), { ok: true, btc: { books: '1', status: 'ok' } }, 'held money is still on chain');

  await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: w.body.id }, { status: 'broadcast' }));
  sats = 100_000_000n - 10_002_500n; // the payout and its fee left the wallet; the books settle at completion
  t.like(await run(), { ok: true, btc: { node: '0.899975', difference: '-0.100025', in_flight_out: '0.100025', status: 'in_flight' } });
  sats -= 1n;
  t.like(await run(), { ok: false, btc: { difference: '-0.10002501', status: 'difference' } });
  sats = 100_000_001n;
  t.like(await run(), { ok: false, btc: { difference: '0.00000001', status: 'difference' } }, 'more on chain than in the books is a difference too');

  down = true;
  t.like(await run(), { ok: false, btc: { node: null, difference: null, status: 'unavailable', error: 'bitcoin node gettxout: timed out after 10000 ms' } });
});
