import { anvilSandbox } from './anvil';
import { bcoinSandbox } from './bcoin';
import type { SandboxChain } from './sandbox-chain';
import { tronSandbox } from './tron';

/**
 * The sandbox nodes `coinkeep dev` starts, one module per chain family. To add a family, write
 * src/dev/<node>.ts exporting a SandboxChain (see sandbox-chain.ts) and list it here: `coinkeep dev`
 * starts it, writes its chain entries into the dev config, and `coinkeep dev pay` pays through it.
 */
export const SANDBOX_CHAINS: readonly SandboxChain[] = [anvilSandbox, bcoinSandbox, tronSandbox];

/** The sandbox node of a chain family, if the sandbox runs one. */
export const sandboxOf = (kind: string): SandboxChain | undefined => SANDBOX_CHAINS.find((f) => f.kind === kind);

/**
 * Where the banner's demo withdrawals go, to the sandbox's own funded wallet: from the first
 * Bitcoin chain (its coin), and from the first EVM chain (each coin, paid from the treasury; the
 * other EVM chain's withdrawals are made the same way with its coin ids, and the banner stays short).
 */
export function demoWithdrawalTargets<C extends { kind: string }>(
  chains: readonly C[],
): { utxo: { chain: C; to: string } | null; account: Array<{ chain: C; to: string }> } {
  const btc = chains.find((c) => c.kind === 'btc');
  const btcTo = sandboxOf('btc')?.payoutAddress?.();
  const evmTo = sandboxOf('evm')?.payoutAddress?.();
  return {
    utxo: btc && btcTo ? { chain: btc, to: btcTo } : null,
    account: evmTo
      ? chains
          .filter((c) => c.kind === 'evm')
          .slice(0, 1)
          .map((chain) => ({ chain, to: evmTo }))
      : [],
  };
}
