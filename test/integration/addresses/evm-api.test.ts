/**
 * The static address API on a real local EVM chain (anvil) with the wallet's own addresses: the
 * shared scenarios of on-chain.ts (creation, 50 parallel creations, every filter and search, the
 * exports, archive by hand and a refused restore, permissions and other accounts' ids; the
 * automatic archive with its warning, on a fake clock, around a real deposit).
 */
import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { FakeClock } from '../../../src/shared/clock';
import { killAllAnvils } from '../../helpers/anvil';
import { startEvmFixture } from '../chains/evm/evm-fixture';
import { apiOnChain, autoArchiveOnChain } from './on-chain';

test.after.always(killAllAnvils);

test("on anvil: wallet addresses per customer and coin, 50 parallel creations make one, every filter and search, csv and xlsx exports, archive and a refused restore, permissions and another account's ids", async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  await apiOnChain(t, f, {
    coin: f.coin.ETH,
    second: { coin: f.coin.USDT, body: { currency: 'USDT' } },
    foreign: coinId('bitcoin', 'native'),
    pattern: /^0x[0-9a-fA-F]{40}$/,
  });
});

test('on anvil: the automatic archive warns 7 days before 180 idle days and archives; an ETH deposit starts the count again', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startEvmFixture({ clock });
  t.teardown(() => f.stop());
  await autoArchiveOnChain(t, f, clock, { coin: f.coin.ETH, deposit: (address) => f.pay(address, 'ETH', '0.1') });
});
