import type { ChainConfig } from '../../../config/schema';
import type { Store } from '../../../db/store';
import type { Clock } from '../../../shared/clock';
import { iso } from '../../../shared/clock';
import { Amount } from '../../../shared/amount';
import type { EvmNode } from './evm-node';
import type { EvmSendQueue } from './send-queue';
import type { EvmSweeper } from './sweeper';

/** The gas station of a chain as `coinkeep status` shows it. */
export interface GasStationStatus {
  chain_id: string;
  address: string;
  /** ETH (coin units); null before the first look at the node. */
  balance: string | null;
  /** What the next sweeps and token payouts need of it, ETH. */
  needed: string;
  warning: string | null;
  checked_at: string | null;
}

/** Something else that needs the gas station's coin (the payout rail's token payouts), wei. */
export type GasNeed = () => Promise<bigint>;

/**
 * One EVM chain's own transactions, run once among the daemons: each pass follows what is out
 * there, plans and signs the due sweeps, and sends what is ready, side by side; and notes whether
 * the gas station can pay what comes next.
 */
export class EvmChainPayouts {
  private station: { balance: bigint; needed: bigint; at: Date } | null = null;
  private readonly needs: GasNeed[] = [];
  private readonly finishers: Array<(signal?: AbortSignal) => Promise<unknown>> = [];

  constructor(
    private readonly deps: {
      chain: ChainConfig;
      node: EvmNode;
      store: Store;
      queue: EvmSendQueue;
      sweeper: EvmSweeper;
      gasStation: { address: string; path: string };
      clock: Clock;
    },
  ) {}

  get chainId(): string {
    return this.deps.chain.id;
  }

  get queue(): EvmSendQueue {
    return this.deps.queue;
  }

  get sweeper(): EvmSweeper {
    return this.deps.sweeper;
  }

  get gasStation(): { address: string; path: string } {
    return this.deps.gasStation;
  }

  addGasNeed(need: GasNeed): void {
    this.needs.push(need);
  }

  /** Work at the end of each pass (the payout rail books what its finished payouts cost). */
  addFinisher(finish: (signal?: AbortSignal) => Promise<unknown>): void {
    this.finishers.push(finish);
  }

  async pass(signal?: AbortSignal): Promise<void> {
    if (!(await this.deps.store.roles.hold(`evm-sends:${this.chainId}`))) return;
    await this.deps.queue.track(signal);
    await this.deps.sweeper.plan(signal);
    await this.deps.queue.broadcastReady(signal);
    for (const finish of this.finishers) await finish(signal);
    const [balance] = await this.deps.node.balances([this.deps.gasStation.address], 'native', 'latest', signal);
    let needed = this.deps.sweeper.needed;
    for (const need of this.needs) needed += await need();
    this.station = { balance: balance!, needed, at: this.deps.clock.now() };
  }

  status(): GasStationStatus {
    const eth = (wei: bigint) => Amount.fromBaseUnits(wei, 18).toString();
    const s = this.station;
    const ticker = this.deps.chain.native.ticker;
    return {
      chain_id: this.chainId,
      address: this.deps.gasStation.address,
      balance: s ? eth(s.balance) : null,
      needed: eth(s?.needed ?? 0n),
      warning:
        s && s.balance < s.needed
          ? `the gas station holds ${eth(s.balance)} ${ticker}, the next sweeps and payouts need ${eth(s.needed)} ${ticker}: fund ${this.deps.gasStation.address}`
          : null,
      checked_at: s ? iso(s.at) : null,
    };
  }
}
