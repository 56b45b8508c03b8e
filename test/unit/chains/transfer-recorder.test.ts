import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { TransferRecorder } from '../../../src/chains/transfer-recorder';
import { TransferRouter } from '../../../src/chains/transfer-router';
import type { IncomingObservation } from '../../../src/chains/types';
import { WalletCoins } from '../../../src/chains/wallet-coins';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { AddressEntity, ChainTransferEntity } from '../../../src/db/entities/chain';
import { Store } from '../../../src/db/store';
import { FakeClock } from '../../../src/shared/clock';

const ETH = coinId('ethereum', 'native');

const seen = (txid: string, confirmations: number): IncomingObservation => ({
  chainId: 'ethereum',
  coinId: ETH,
  txid,
  index: 0,
  address: '0xA11CE',
  addressId: '00000000-0000-4000-8000-000000000001',
  amount: '1',
  blockHeight: 10,
  blockHash: '0xb10',
  confirmations,
});

test('a transfer row changed by another writer after it was read is not overwritten: the batch gives way and its handler is not told', async (t) => {
  const store = await Store.open({ url: 'sqlite::memory:' });
  await store.migrate();
  t.teardown(() => store.close());
  await store.write((em) =>
    em.insert(AddressEntity, {
      id: '00000000-0000-4000-8000-000000000001',
      account_id: 'acc',
      chain_id: 'ethereum',
      coin_id: ETH,
      address: '0xA11CE',
      derivation_path: "m/44'/60'/0'/0/0",
      derivation_index: 0,
      purpose: 'invoice',
      invoice_id: null,
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    }),
  );
  const told: string[] = [];
  const router = new TransferRouter().register('invoice', 'incoming', {
    onTransfer: async (em, row, previous) => {
      told.push(`${row.txid}:${previous ?? 'new'}>${row.status}`);
      // Another scanner confirms 0xb between this batch's read of it and its own change of it.
      if (row.txid === '0xa' && row.status === 'confirmed') await em.update(ChainTransferEntity, { txid: '0xb' }, { status: 'confirmed' });
    },
  });
  const recorder = new TransferRecorder(router, new WalletCoins(new WatchedAddresses()), new FakeClock());
  await store.write((em) => recorder.observeAll(em, [seen('0xa', 1), seen('0xb', 1)], 3));
  told.length = 0;

  await t.throwsAsync(
    store.write((em) => recorder.observeAll(em, [seen('0xa', 3), seen('0xb', 3)], 3)),
    { message: /changed while it was recorded/ },
  );
  t.deepEqual(told, ['0xa:seen>confirmed'], "0xb's handler is not told of a change made from a stale read");
  t.deepEqual(
    (await store.read.find(ChainTransferEntity, { order: { txid: 'ASC' } })).map((r) => [r.txid, r.status]),
    [
      ['0xa', 'seen'],
      ['0xb', 'seen'],
    ],
    'nothing of the batch is committed',
  );
});
