import type { ChainConfig } from '../config/schema';

/** A payment the sandbox makes from its funded wallet (`coinkeep dev pay`). */
export interface SandboxPayment {
  /** `native`, or the token contract as configured. */
  asset: string;
  to: string;
  /** Base units (wei, token units, satoshi). */
  amount: bigint;
}

/** A sandbox node that runs until stopped. */
export interface RunningSandboxNode {
  /** The chain entries this node serves, in the config file's shape (written into the dev config). */
  readonly chains: Record<string, unknown>[];
  /** Stops the node, keeping its chain under the state dir for the next start. */
  stop(): Promise<void>;
}

/**
 * One chain family's local node for `coinkeep dev`: it starts the node on 127.0.0.1 (a free port,
 * its chain kept under `stateDir`), prepares the test assets, and pays from a funded wallet.
 */
export interface SandboxChain {
  readonly kind: ChainConfig['kind'];
  start(opts: { stateDir: string }): Promise<RunningSandboxNode>;
  /** Sends the payment and mines until it has the chain's confirmations; returns the txid. */
  pay(chain: ChainConfig, payment: SandboxPayment): Promise<{ txid: string }>;
  /** Mines `blocks` blocks (`coinkeep dev mine`); returns the new tip's height. */
  mine(chain: ChainConfig, blocks: number): Promise<{ height: number }>;
  /** An address of the sandbox's own funded wallet: somewhere outside the daemon's wallet a sandbox withdrawal can pay. */
  payoutAddress?(): string;
  /** Account chains: funds the chain's gas station from the sandbox's payer when it runs low (mined); whether it sent anything. */
  fundGasStation?(chain: ChainConfig, gasStation: string): Promise<boolean>;
}
