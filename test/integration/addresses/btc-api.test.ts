/**
 * The static address API on a real Bitcoin node (bcoin regtest) with the wallet's own addresses:
 * the shared scenarios of on-chain.ts (creation, 50 parallel creations, every filter and search,
 * the exports, archive by hand and a refused restore, permissions and other accounts' ids; the
 * automatic archive with its warning, on a fake clock, around a real deposit).
 */
import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { FakeClock } from '../../../src/shared/clock';
import { killAllBcoins } from '../../helpers/bcoin';
import { BTC, startBtcFixture } from '../chains/btc/btc-fixture';
import { apiOnChain, autoArchiveOnChain } from './on-chain';

test.after.always(killAllBcoins);

test("on bcoin: wallet addresses per customer, 50 parallel creations make one, every filter and search, csv and xlsx exports, archive and a refused restore, permissions and another account's ids", async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  await apiOnChain(t, f, { coin: BTC, second: null, foreign: coinId('ethereum', 'native'), pattern: /^rb1q[02-9ac-hj-np-z]{38,58}$/ });
});

test('on bcoin: the automatic archive warns 7 days before 180 idle days and archives; a BTC deposit starts the count again', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startBtcFixture({ clock });
  t.teardown(() => f.stop());
  await autoArchiveOnChain(t, f, clock, { coin: BTC, deposit: (address) => f.pay(address, '0.1') });
});
