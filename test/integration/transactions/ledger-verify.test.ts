import test from 'ava';
import { LedgerBalanceEntity } from '../../../src/db/entities/money';
import { accountBook } from '../../../src/ledger/ledger';
import { coinId } from '../../../src/catalog/coins';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { recordTransaction } from '../../helpers/money-fixtures';

const BTC = coinId('bitcoin', 'native');

/** Runs the real CLI (bin/coinkeep) against the test daemon's admin socket. */
const cli = (td: TestDaemon, args: string[]) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), ...args], { timeoutMs: 60_000 });

test('ledger verify passes on books that match the journal and fails, naming the difference, on a tampered balance', async (t) => {
  const td = await startTestDaemon();
  t.teardown(() => td.stop());
  const accountId = (await td.daemon.team.createAccount('Shop', 'o@example.com')).account.id;
  await recordTransaction(td.daemon.store, { accountId, coinId: BTC, amount: '0.5', fee: '0.005' });
  await recordTransaction(td.daemon.store, { accountId, coinId: BTC, amount: '0.00000001' });

  const good = await cli(td, ['--json', 'ledger', 'verify']);
  t.is(good.code, 0, good.stderr);
  const report = JSON.parse(good.stdout);
  t.true(report.ok);
  t.is(report.entries, 3);
  t.deepEqual(report.differences, []);

  await td.daemon.store.write((em) => em.update(LedgerBalanceEntity, { book: accountBook(accountId), coin_id: BTC }, { credits_posted: '0.49500002' }));
  const bad = await cli(td, ['--json', 'ledger', 'verify']);
  t.not(bad.code, 0);
  const badReport = JSON.parse(bad.stdout);
  t.false(badReport.ok);
  t.deepEqual(badReport.differences, [{ book: accountBook(accountId), coin_id: BTC, field: 'credits_posted', journal: '0.49500001', cached: '0.49500002' }]);
  t.regex(bad.stderr, new RegExp(`credits_posted: journal 0\\.49500001, cached 0\\.49500002`));

  const human = await cli(td, ['ledger', 'verify']);
  t.not(human.code, 0);
  t.regex(human.stdout, new RegExp(`difference: account:${accountId} ${BTC} credits_posted: journal 0\\.49500001, cached 0\\.49500002`));
  t.regex(human.stdout, /MISMATCH/);
});
