/**
 * What the simulator reads from bcoin on its own, without the daemon and without a transaction
 * index: the best chain's blocks (cached by hash, so a reorganisation reads only what changed) and
 * every output they pay, by address.
 */
import { address as baddress, Block } from 'bitcoinjs-lib';
import { btcNetwork } from '../../src/chains/btc/derive';
import { BCOIN_REGTEST_OPTIONS, type BcoinNode } from '../../src/dev/bcoin-node';

const NETWORK = btcNetwork({ network: 'regtest', options: BCOIN_REGTEST_OPTIONS });

export interface MinedPayment {
  txid: string;
  height: number;
  value: bigint;
}

export class BtcChainView {
  private readonly blocks = new Map<string, Array<{ txid: string; outs: Array<{ address: string | null; value: bigint }> }>>();

  constructor(
    private readonly node: BcoinNode,
    private readonly from: number,
  ) {}

  /** Every payment to each address on the best chain now, and the tip's height. */
  async payments(): Promise<{ tip: number; byAddress: Map<string, MinedPayment[]>; mined: Map<string, number> }> {
    const tip = await this.node.height();
    const byAddress = new Map<string, MinedPayment[]>();
    const mined = new Map<string, number>();
    for (let h = this.from; h <= tip; h++) {
      const hash = await this.node.rpc.call<string>('getblockhash', [h]);
      let txs = this.blocks.get(hash);
      if (!txs) {
        const block = Block.fromHex(await this.node.rpc.call<string>('getblock', [hash, false]));
        txs = (block.transactions ?? []).map((tx) => ({
          txid: tx.getId(),
          outs: tx.outs.map((o) => ({ address: toAddress(o.script), value: BigInt(o.value) })),
        }));
        this.blocks.set(hash, txs);
      }
      for (const tx of txs) {
        mined.set(tx.txid, h);
        for (const o of tx.outs) {
          if (!o.address) continue;
          const list = byAddress.get(o.address) ?? [];
          list.push({ txid: tx.txid, height: h, value: o.value });
          byAddress.set(o.address, list);
        }
      }
    }
    return { tip, byAddress, mined };
  }
}

function toAddress(script: Uint8Array): string | null {
  try {
    return baddress.fromOutputScript(script, NETWORK);
  } catch {
    return null;
  }
}
