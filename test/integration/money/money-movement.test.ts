import test, { type ExecutionContext } from 'ava';
import type { EntityManager } from 'typeorm';
import { Catalog, coinId } from '../../../src/catalog/coins';
import { parseConfig } from '../../../src/config/schema';
import type { ChainTransferRow } from '../../../src/db/entities/chain';
import { LedgerEntryEntity, TransactionEntity } from '../../../src/db/entities/money';
import { Store } from '../../../src/db/store';
import { accountBook, EXTERNAL_BOOK, FEE_BOOK, Ledger, NETWORK_BOOK } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { MoneyMovement, type Hold, type Receipt } from '../../../src/money/money-movement';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { newId } from '../../../src/shared/ids';
import { Amount } from '../../../src/shared/amount';
import { confirmedTransferRow } from '../../helpers/chain-transfer-row';
import { tempStore } from '../../helpers/memory-store';
import { tempPostgres } from '../../helpers/pg-database';

const ETH = coinId('ethereum', 'native');
const ACCOUNT = 'acc-1';
const TERMS = { percent: '1', paidBy: 'merchant' as const };

async function setup(t: ExecutionContext, url?: string) {
  const store = url ? await Store.open({ url }) : await tempStore(t);
  if (url) {
    await store.migrate();
    t.teardown(() => store.close());
  }
  const config = parseConfig({ chains: [{ id: 'ethereum', kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:1' }] });
  const clock = new FakeClock();
  const ledger = new Ledger(clock);
  const money = new MoneyMovement({ ledger, catalog: new Catalog(config.chains, config.fiat), clock });
  /** A hold of ETH from ACCOUNT for a new withdrawal: `amount` moved to `legs` once settled. */
  const hold = (em: EntityManager, amount: string, legs: Hold['legs']) =>
    money.hold(em, { accountId: ACCOUNT, coinId: ETH, withdrawalId: newId(), amount: Amount.of(amount), legs });
  const receipt = (amount: string): Receipt => ({
    transfer: transferRow(amount),
    accountId: ACCOUNT,
    type: 'invoice_payment',
    invoiceId: newId(),
    addressId: null,
  });
  const balance = async (book = accountBook(ACCOUNT)) => {
    const b = await ledger.balance(store.read, book, ETH);
    return { available: b.available.toString(), hold: b.hold.toString() };
  };
  const entries = () => store.read.find(LedgerEntryEntity, { order: { seq: 'ASC' } });
  const transactions = () => store.read.find(TransactionEntity, { order: { created_at: 'ASC', type: 'DESC' } });
  const verified = async () => (await store.snapshot((em) => verifyLedger(em))).ok;
  /** Runs each operation in a write transaction of its own, all at once (overlapping on PostgreSQL). */
  const atOnce = <T>(...ops: Array<(em: Parameters<Parameters<Store['write']>[0]>[0]) => Promise<T>>): Promise<T[]> => {
    if (!url) return Promise.all(ops.map((op) => store.write(op)));
    // Every transaction is open before any of them moves money: nothing but the guards keeps them apart.
    let arrived = 0;
    let release!: () => void;
    const all = new Promise<void>((resolve) => (release = resolve));
    return Promise.all(
      ops.map((op) =>
        store.write(async (em) => {
          await em.query('SELECT 1');
          if (++arrived === ops.length) release();
          await all;
          return op(em);
        }),
      ),
    );
  };
  return { store, ledger, money, hold, receipt, balance, entries, transactions, verified, atOnce };
}

function transferRow(amount: string): ChainTransferRow {
  return confirmedTransferRow({ coin_id: ETH, account_id: ACCOUNT, amount, address: '0xA11CE', block_hash: '0xb10' }, '2026-01-01T00:00:00.000Z');
}

for (const dialect of ['SQLite', 'PostgreSQL'] as const) {
  const open = async (t: ExecutionContext) => (dialect === 'SQLite' ? setup(t) : setup(t, await tempPostgres(t)));

  test(`${dialect}: a transfer credited twice at once without any lock is credited once, less the fee`, async (t) => {
    const s = await open(t);
    const r = s.receipt('100');
    const credited = await s.atOnce(
      (em) => s.money.credit(em, r, TERMS),
      (em) => s.money.credit(em, r, TERMS),
    );
    t.deepEqual(credited.sort(), [false, true]);
    t.deepEqual(
      (await s.entries()).map((e) => [e.credit_book, e.amount, e.code]),
      [
        [accountBook(ACCOUNT), '99', 'invoice_payment'],
        [FEE_BOOK, '1', 'platform_fee'],
      ],
    );
    t.like(await s.transactions(), [{ type: 'invoice_payment', status: 'confirmed', amount: '100', fee: '1', net_amount: '99' }]);
    t.deepEqual(await s.balance(), { available: '99', hold: '0' });
    t.true(await s.verified());
  });

  test(`${dialect}: a credit taken back twice at once is taken back once by one adjustment`, async (t) => {
    const s = await open(t);
    const r = s.receipt('100');
    await s.store.write((em) => s.money.credit(em, r, TERMS));
    const reverted = { ...r, transfer: { ...r.transfer, status: 'reverted' as const } };
    const taken = await s.atOnce(
      (em) => s.money.takeBack(em, reverted),
      (em) => s.money.takeBack(em, reverted),
    );
    t.deepEqual(taken.sort(), [false, true]);
    t.like(await s.transactions(), [
      { type: 'invoice_payment', status: 'reverted', amount: '100' },
      { type: 'adjustment', status: 'confirmed', amount: '-100', fee: '-1', net_amount: '-99' },
    ]);
    t.is((await s.entries()).filter((e) => e.reverses_id !== null).length, 2, 'the credit and the fee reversed once each');
    t.deepEqual(await s.balance(), { available: '0', hold: '0' });
    t.deepEqual(await s.balance(FEE_BOOK), { available: '0', hold: '0' });
    t.true(await s.verified());
  });

  test(`${dialect}: a withdrawal held twice at once is held once`, async (t) => {
    const s = await open(t);
    await s.store.write((em) => s.money.credit(em, s.receipt('100'), { percent: '0', paidBy: 'merchant' }));
    const withdrawalId = newId();
    const hold = {
      accountId: ACCOUNT,
      coinId: ETH,
      withdrawalId,
      amount: Amount.of('60'),
      legs: [{ book: EXTERNAL_BOOK, amount: Amount.of('60'), code: 'withdrawal' }],
    };
    const held = await s.atOnce(
      (em) => s.money.hold(em, hold),
      (em) => s.money.hold(em, hold),
    );
    t.is(held.filter((row) => row !== null).length, 1);
    t.deepEqual(await s.balance(), { available: '40', hold: '60' });
    t.true(await s.verified());
  });
}

test('a transfer seen twice has one pending row; taken back while pending it is reverted and the ledger is untouched', async (t) => {
  const s = await setup(t);
  const r = s.receipt('5');
  t.true(await s.store.write((em) => s.money.receive(em, r)));
  t.false(await s.store.write((em) => s.money.receive(em, r)));
  t.like(await s.transactions(), [{ status: 'pending', amount: '5', fee: null, net_amount: null, chain_transfer_id: r.transfer.id }]);
  t.true(await s.store.write((em) => s.money.takeBack(em, r)));
  t.like(await s.transactions(), [{ status: 'reverted' }]);
  t.deepEqual(await s.entries(), []);
  // Included again: a new pending row, credited as any other.
  t.true(await s.store.write((em) => s.money.credit(em, r, TERMS)));
  t.deepEqual(
    (await s.transactions()).map((x) => x.status),
    ['reverted', 'confirmed'],
  );
  t.deepEqual(await s.balance(), { available: '4.95', hold: '0' });
});

test('a settle posts each leg of a hold once, what was not taken returns to available, and a void after it changes nothing', async (t) => {
  const s = await setup(t);
  await s.store.write((em) => s.money.credit(em, s.receipt('100'), { percent: '0', paidBy: 'merchant' }));
  const row = await s.store.write((em) =>
    s.hold(em, '50', [
      { book: EXTERNAL_BOOK, amount: Amount.of('50'), code: 'withdrawal' },
      { book: FEE_BOOK, amount: Amount.of('1'), code: 'platform_fee' },
      { book: NETWORK_BOOK, amount: Amount.of('3'), code: 'network_fee' },
    ]),
  );
  t.deepEqual(await s.balance(), { available: '46', hold: '54' });
  t.true(await s.store.write((em) => s.money.settle(em, row!.id, new Map([['network_fee', Amount.of('2')]]))));
  t.false(await s.store.write((em) => s.money.settle(em, row!.id)));
  t.false(await s.store.write((em) => s.money.void(em, row!.id)));
  t.deepEqual(await s.balance(), { available: '47', hold: '0' });
  t.deepEqual(await s.balance(NETWORK_BOOK), { available: '2', hold: '0' });
  t.like(await s.store.read.findOneByOrFail(TransactionEntity, { id: row!.id }), { type: 'withdrawal', status: 'confirmed', amount: '50' });
  t.is((await s.entries()).filter((e) => e.kind === 'post_pending').length, 3);
  t.true(await s.verified());
});

test('a void releases a hold whole, and a settle after it changes nothing', async (t) => {
  const s = await setup(t);
  await s.store.write((em) => s.money.credit(em, s.receipt('10'), { percent: '0', paidBy: 'merchant' }));
  const row = await s.store.write((em) => s.hold(em, '8', [{ book: EXTERNAL_BOOK, amount: Amount.of('8'), code: 'withdrawal' }]));
  t.true(await s.store.write((em) => s.money.void(em, row!.id)));
  t.false(await s.store.write((em) => s.money.settle(em, row!.id)));
  t.deepEqual(await s.balance(), { available: '10', hold: '0' });
  t.like(await s.store.read.findOneByOrFail(TransactionEntity, { id: row!.id }), { status: 'reverted' });
  t.true(await s.verified());
});

test('a hold the available balance cannot cover is refused with insufficient_funds and writes nothing', async (t) => {
  const s = await setup(t);
  await s.store.write((em) => s.money.credit(em, s.receipt('10'), { percent: '0', paidBy: 'merchant' }));
  const before = { entries: (await s.entries()).length, transactions: (await s.transactions()).length };
  const err = await t.throwsAsync(
    s.store.write((em) =>
      s.hold(em, '10', [
        { book: EXTERNAL_BOOK, amount: Amount.of('10'), code: 'withdrawal' },
        { book: FEE_BOOK, amount: Amount.of('0.5'), code: 'platform_fee' },
      ]),
    ),
  );
  t.true(err instanceof ApiError);
  t.like(err, { status: 409, code: 'conflict', details: { reason: 'insufficient_funds' } });
  t.deepEqual({ entries: (await s.entries()).length, transactions: (await s.transactions()).length }, before);
  t.deepEqual(await s.balance(), { available: '10', hold: '0' });
});
