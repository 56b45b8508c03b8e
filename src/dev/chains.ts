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
