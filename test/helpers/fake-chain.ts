import { AddressEntity, ChainTransferEntity, type ChainTransferRow } from '../../src/db/entities/chain';
import type { Store } from '../../src/db/store';
import type { TransferRecorder } from '../../src/chains/transfer-recorder';

export interface FakeTransfer {
  chainId: string;
  coinId: string;
  txid: string;
  index: number;
  address: string;
  amount: string;
}

/**
 * An in-memory chain source for payment tests: it drives the real TransferRecorder (and through it
 * the transfer router and the handlers under test) with transfers seen in a mempool, confirmed in a block, or reverted by a
 * reorganisation, each in its own write transaction as the chain core does, so no node is needed.
 */
export class FakeChainSource {
  private height = 1000;
  private tx = 0;

  constructor(
    private readonly store: Store,
    readonly recorder: TransferRecorder,
    private readonly opts: { chainId: string; confirmations: number },
  ) {}

  /** A transfer enters the mempool: seen, 0 confirmations. */
  async send(address: string, coinId: string, amount: string): Promise<FakeTransfer> {
    const t: FakeTransfer = { chainId: this.opts.chainId, coinId, txid: `0xfake${(this.tx++).toString(16).padStart(8, '0')}`, index: 0, address, amount };
    await this.observe(t, null, 0);
    return t;
  }

  /** The transfer is mined and buried under enough blocks. */
  async confirm(t: FakeTransfer): Promise<void> {
    this.height += this.opts.confirmations;
    await this.observe(t, this.height - this.opts.confirmations + 1, this.opts.confirmations);
  }

  /** Seen and confirmed at once (a transfer found in an already deep block). */
  async pay(address: string, coinId: string, amount: string): Promise<FakeTransfer> {
    const t = await this.send(address, coinId, amount);
    await this.confirm(t);
    return t;
  }

  /** A reorganisation drops the transfer. */
  async revert(t: FakeTransfer): Promise<void> {
    await this.store.write(async (em) => {
      const row = await em.findOneByOrFail(ChainTransferEntity, {
        chain_id: t.chainId,
        txid: t.txid,
        coin_id: t.coinId,
        output_index: t.index,
        direction: 'incoming',
      });
      await this.recorder.revert(em, row);
    });
  }

  private observe(t: FakeTransfer, blockHeight: number | null, confirmations: number): Promise<ChainTransferRow | null> {
    return this.store.write(async (em) =>
      this.recorder.observe(
        em,
        {
          chainId: t.chainId,
          coinId: t.coinId,
          txid: t.txid,
          index: t.index,
          address: t.address,
          // As the chain core takes it from the watched set; none for an address not the wallet's.
          addressId: (await em.findOneBy(AddressEntity, { chain_id: t.chainId, address: t.address }))?.id ?? 'not-the-wallets',
          amount: t.amount,
          blockHeight,
          blockHash: blockHeight === null ? null : `0xblock${blockHeight}`,
          confirmations,
        },
        this.opts.confirmations,
      ),
    );
  }
}
