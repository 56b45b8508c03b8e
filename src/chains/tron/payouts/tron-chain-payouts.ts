import type { ChainConfig } from '../../../config/schema';
import type { Store } from '../../../db/store';
import { iso, type Clock } from '../../../shared/clock';
import { Amount } from '../../../shared/amount';
import type { GasStationStatus } from '../../evm/payouts/evm-chain-payouts';
import type { TronNodeApi } from './tron-node-api';
import type { TronSendQueue } from './tron-sends';
import type { TronSweeper } from './tron-sweeper';

/** How often the gas station's account is read for the status when nothing else asks. */
const STATION_REFRESH_MS = 60_000;
/**
 * One Tron chain's own transactions, run once among the daemons (role `tron-sends:<chain>`): each
 * pass follows what is out there, lets the gas station stake and take back its energy, plans the
 * due sweeps' next steps, and sends what is stored; and notes the gas station's TRX and stake.
 */
export class TronChainPayouts {
  private station: { balance: bigint; staked: bigint; at: Date } | null = null;

  constructor(
    private readonly deps: {
      chain: ChainConfig;
      node: TronNodeApi;
      store: Store;
      queue: TronSendQueue;
      sweeper: TronSweeper;
      gasStation: { address: string; path: string };
      clock: Clock;
    },
  ) {}

  get chainId(): string {
    return this.deps.chain.id;
  }

  get gasStation(): { address: string; path: string } {
    return this.deps.gasStation;
  }

  get sweeper(): TronSweeper {
    return this.deps.sweeper;
  }

  async pass(signal?: AbortSignal): Promise<void> {
    if (!(await this.deps.store.roles.hold(`tron-sends:${this.chainId}`))) return;
    const finalFrom = await this.deps.queue.track(signal);
    await this.deps.sweeper.plan(signal);
    await this.deps.queue.broadcastReady(signal);
    // What `coinkeep status` shows of the station: read again once a minute, not at every pass (a hosted node's quota counts each
    // request), and as soon as one of the station's own sends (a stake, a delegation, a top-up) became final.
    const fresh = this.station && this.deps.clock.now().getTime() - this.station.at.getTime() < STATION_REFRESH_MS;
    if (fresh && !finalFrom.has(this.deps.gasStation.address)) return;
    const a = await this.deps.node.account(this.deps.gasStation.address, signal);
    this.station = { balance: a.balance, staked: a.stakedEnergy, at: this.deps.clock.now() };
  }

  /** For `coinkeep status`: the station's TRX, with a warning when it holds less than it should stake or nothing to activate addresses with. */
  status(): GasStationStatus {
    const trx = (sun: bigint) => Amount.fromBaseUnits(sun, 6).toString();
    const s = this.station;
    const want = this.deps.chain.tron?.stake_sun ?? 0n;
    const warning =
      s && s.staked < want
        ? `the gas station has ${trx(s.staked)} TRX staked for energy of the ${trx(want)} configured (sweep.stake): fund ${this.deps.gasStation.address}`
        : s && this.deps.sweeper.waitingForEnergy > 0
          ? `${this.deps.sweeper.waitingForEnergy} token sweep(s) wait for energy: stake more TRX at the gas station (sweep.stake, fund ${this.deps.gasStation.address}) or allow burning (sweep.max_burn)`
          : s && s.balance < 2_000_000n
            ? `the gas station holds ${trx(s.balance)} TRX: it cannot activate new addresses; fund ${this.deps.gasStation.address}`
            : null;
    return {
      chain_id: this.chainId,
      address: this.deps.gasStation.address,
      balance: s ? trx(s.balance) : null,
      needed: trx(want),
      warning,
      checked_at: s ? iso(s.at) : null,
    };
  }
}
