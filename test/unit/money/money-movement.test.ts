/**
 * ARCHITECTURE "The money path, both ways": the one owner of money movement makes its guarded
 * state change first and posts to the ledger only when the guard held, so an operation made twice
 * (a rescan, two daemons, a retry) moves the money once. Here against a scripted database that
 * answers each statement as a guard that held or did not, and a ledger that records what it is
 * asked: no I/O.
 */
import test from 'ava';
import type { EntityManager } from 'typeorm';
import type { Catalog } from '../../../src/catalog/coins';
import type { ChainTransferRow } from '../../../src/db/entities/chain';
import type { Ledger } from '../../../src/ledger/ledger';
import { MoneyMovement, type Receipt } from '../../../src/money/money-movement';
import { FakeClock } from '../../../src/shared/clock';
import { Amount } from '../../../src/shared/amount';

/** A SQLite EntityManager whose statements `answer` decides: rows for a read (or an UPDATE ... RETURNING), a row count for a write. */
function scripted(answer: (sql: string) => unknown[] | number): { em: EntityManager; sql: string[] } {
  const sql: string[] = [];
  const prepare = (text: string) => ({
    reader: /^\s*SELECT|RETURNING/i.test(text),
    all: () => (sql.push(text), answer(text) as unknown[]),
    run: () => (sql.push(text), { changes: answer(text) as number }),
  });
  const em = { connection: { options: { type: 'better-sqlite3' }, driver: { databaseConnection: { prepare } } } };
  return { em: em as unknown as EntityManager, sql };
}

function recordingLedger() {
  const calls: string[] = [];
  const ledger = {
    post: async (_em: unknown, ms: Array<{ debit: string; credit: string; amount: Amount; code: string }>) =>
      void calls.push(...ms.map((m) => `post ${m.debit} → ${m.credit} ${m.amount.toString()} ${m.code}`)),
    holdAll: async (_em: unknown, ms: Array<{ debit: string; credit: string; amount: Amount }>, ensure: boolean) =>
      void calls.push(...ms.map((m) => `hold ${m.debit} → ${m.credit} ${m.amount.toString()}${ensure ? ' (funds ensured)' : ''}`)),
    postPending: async (_em: unknown, id: string, amount?: Amount) => void calls.push(`settle ${id}${amount ? ` ${amount.toString()}` : ''}`),
    voidPending: async (_em: unknown, id: string) => void calls.push(`release ${id}`),
  };
  return { ledger: ledger as unknown as Ledger, calls };
}

const catalog = { coin: () => ({ decimals: 8 }) } as unknown as Catalog;
const clock = new FakeClock(new Date('2026-03-01T00:00:00.000Z'));
const receipt: Receipt = {
  transfer: { id: 'ct1', coin_id: 'btc', amount: '1', txid: 'abc' } as ChainTransferRow,
  accountId: 'acc',
  type: 'deposit',
  invoiceId: null,
  addressId: 'addr',
};
const terms = { percent: '1', paidBy: 'merchant' as const };

test('a confirmed transfer is credited, with its fee, only when this call moved its row from pending to confirmed', async (t) => {
  const { ledger, calls } = recordingLedger();
  const { em } = scripted((sql) => (sql.startsWith('UPDATE transactions') ? [{ id: 'tx1' }] : 1));
  t.true(await new MoneyMovement({ ledger, catalog, clock }).credit(em, receipt, terms));
  t.deepEqual(calls, ['post external → account:acc 0.99 deposit', 'post external → fees 0.01 platform_fee']);
});

test('a transfer confirmed again (a rescan, another daemon) is not credited twice', async (t) => {
  const { ledger, calls } = recordingLedger();
  // The row is confirmed already: the guarded UPDATE matches nothing, and the pending row exists (the insert is ignored).
  const { em, sql } = scripted((s) => (s.startsWith('UPDATE transactions') ? [] : 0));
  t.false(await new MoneyMovement({ ledger, catalog, clock }).credit(em, receipt, terms));
  t.deepEqual(calls, []);
  t.is(sql.filter((s) => s.startsWith('UPDATE transactions')).length, 2, 'the guard is tried again after the pending row is written');
});

test("a withdrawal's money is held once: a second hold of the same withdrawal finds its live row and holds nothing", async (t) => {
  const legs = [{ book: 'external', amount: Amount.of('1'), code: 'withdrawal' }];
  const first = recordingLedger();
  const row = await new MoneyMovement({ ledger: first.ledger, catalog, clock }).hold(scripted(() => 1).em, {
    accountId: 'acc',
    coinId: 'btc',
    withdrawalId: 'w1',
    amount: Amount.of('1'),
    legs,
  });
  t.like(row, { type: 'withdrawal', status: 'pending', withdrawal_id: 'w1', amount: '1' });
  t.deepEqual(first.calls, ['hold account:acc → external 1 (funds ensured)']);
  const again = recordingLedger();
  t.is(
    await new MoneyMovement({ ledger: again.ledger, catalog, clock }).hold(scripted(() => 0).em, {
      accountId: 'acc',
      coinId: 'btc',
      withdrawalId: 'w1',
      amount: Amount.of('1'),
      legs,
    }),
    null,
  );
  t.deepEqual(again.calls, []);
});

test('a settled withdrawal posts each hold once, what was really taken by leg code; a second settle moves nothing', async (t) => {
  const holds = [
    { id: 'h1', code: 'withdrawal' },
    { id: 'h2', code: 'network_fee' },
  ];
  const { ledger, calls } = recordingLedger();
  const money = new MoneyMovement({ ledger, catalog, clock });
  t.true(await money.settle(scripted((s) => (s.startsWith('SELECT') ? holds : 1)).em, 'w-tx', new Map([['network_fee', Amount.of('0.0001')]])));
  t.deepEqual(calls, ['settle h1', 'settle h2 0.0001']);
  t.false(await money.settle(scripted((s) => (s.startsWith('SELECT') ? holds : 0)).em, 'w-tx'));
  t.deepEqual(calls, ['settle h1', 'settle h2 0.0001']);
});

test('a voided withdrawal releases each hold once', async (t) => {
  const holds = [{ id: 'h1', code: 'withdrawal' }];
  const { ledger, calls } = recordingLedger();
  const money = new MoneyMovement({ ledger, catalog, clock });
  t.true(await money.void(scripted((s) => (s.startsWith('SELECT') ? holds : 1)).em, 'w-tx'));
  t.false(await money.void(scripted((s) => (s.startsWith('SELECT') ? holds : 0)).em, 'w-tx'));
  t.deepEqual(calls, ['release h1']);
});

test("a payout's fee is booked to the network book once; booked again only for a different fee, by the difference", async (t) => {
  const { ledger, calls } = recordingLedger();
  const money = new MoneyMovement({ ledger, catalog, clock });
  const fee = (booked: string | null, updated: boolean) =>
    scripted((s) => (s.startsWith('SELECT') ? [{ fee_booked: booked }] : updated ? [{ id: 'p1' }] : [])).em;
  t.true(await money.bookPayoutFee(fee(null, true), { payoutId: 'p1', coinId: 'btc', fee: Amount.of('0.0002') }));
  t.false(await money.bookPayoutFee(fee('0.0002', true), { payoutId: 'p1', coinId: 'btc', fee: Amount.of('0.0002') }), 'the same fee: nothing to book');
  t.false(await money.bookPayoutFee(fee(null, false), { payoutId: 'p1', coinId: 'btc', fee: Amount.of('0.0002') }), 'another daemon booked it first');
  t.true(await money.bookPayoutFee(fee('0.0002', true), { payoutId: 'p1', coinId: 'btc', fee: Amount.of('0.00015') }));
  t.deepEqual(calls, ['post network → external 0.0002 network_cost', 'post external → network 0.00005 network_cost']);
});
