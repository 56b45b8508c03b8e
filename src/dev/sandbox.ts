import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { writePrivateFile } from '../db/seal';
import { SANDBOX_CHAINS } from './chains';
import type { RunningSandboxNode } from './sandbox-chain';

/** The config `coinkeep dev` runs with: its base config plus the chains of the nodes it started. */
export const sandboxConfigPath = (dataDir: string): string => path.join(dataDir, 'sandbox.yaml');

export interface RunningSandbox {
  configFile: string;
  /** The chain entries of the started nodes, as written into the config. */
  chains: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Starts every sandbox node (src/dev/chains.ts), each keeping its chain under <data_dir>/sandbox so
 * the next start goes on with the same chain, and writes <data_dir>/sandbox.yaml: the base config
 * with those nodes' chains (replacing base chains of the same id). `coinkeep dev pay` reads it back.
 */
export async function startSandbox(baseConfigFile: string, dataDir: string): Promise<RunningSandbox> {
  const stateDir = path.join(dataDir, 'sandbox');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const nodes: RunningSandboxNode[] = [];
  const stop = async () => void (await Promise.all(nodes.map((n) => n.stop())));
  try {
    // Every family's nodes at once (each waits mostly on its own process): the start takes as long as the slowest.
    const started = await Promise.allSettled(SANDBOX_CHAINS.map((family) => family.start({ stateDir })));
    for (const r of started) if (r.status === 'fulfilled') nodes.push(r.value);
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const chains = nodes.flatMap((n) => n.chains);
    const ids = new Set(chains.map((c) => c.id));
    const doc = (YAML.parse(readFileSync(baseConfigFile, 'utf8')) ?? {}) as Record<string, unknown>;
    const base = ((doc.chains as Array<Record<string, unknown>> | undefined) ?? []).filter((c) => !ids.has(c.id));
    const configFile = sandboxConfigPath(dataDir);
    const header = `# Written by \`coinkeep dev\` at each start from ${path.basename(baseConfigFile)}: the chains are the sandbox's own nodes.\n`;
    writePrivateFile(configFile, header + YAML.stringify({ ...doc, data_dir: dataDir, chains: [...base, ...chains] }));
    return { configFile, chains, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
