import { EVM_PRESET_NAMES, evmPreset, type EvmPreset } from '../../chains/evm/presets';
import { configFromText } from '../../config/load';
import type { Environment } from '../../config/schema';
import { UserError } from '../../shared/errors';

/** The node URL `coinkeep init --preset` writes when `--rpc-url` is not given: a node of one's own, on this host. */
export const DEFAULT_PRESET_RPC_URL = 'http://127.0.0.1:8545';

export interface InitPreset {
  name: string;
  preset: EvmPreset;
  rpcUrl: string;
}

/**
 * `--preset NAME` and `--network` of `coinkeep init`: the preset must be a built-in one, and a
 * mainnet preset goes with a mainnet install, a testnet preset with a testnet one (test keys must
 * never take real money). Without `--network` the preset's own decides.
 */
export function initNetwork(
  network: string | undefined,
  presetName: string | undefined,
  rpcUrl: string | undefined,
): { network: Environment; preset?: InitPreset } {
  if (network !== undefined && network !== 'testnet' && network !== 'mainnet') throw new UserError('--network must be testnet or mainnet');
  if (presetName === undefined) {
    if (rpcUrl !== undefined) throw new UserError('--rpc-url goes with --preset');
    return { network: (network as Environment | undefined) ?? 'testnet' };
  }
  const preset = evmPreset(presetName);
  if (!preset) throw new UserError(`--preset: unknown preset ${JSON.stringify(presetName)}: must be one of ${EVM_PRESET_NAMES.join(', ')}`);
  const own: Environment = preset.testnet ? 'testnet' : 'mainnet';
  const chosen = (network as Environment | undefined) ?? own;
  checkPresetNetwork(presetName, preset, chosen);
  return { network: chosen, preset: { name: presetName, preset, rpcUrl: rpcUrl ?? DEFAULT_PRESET_RPC_URL } };
}

export function checkPresetNetwork(name: string, preset: EvmPreset, network: Environment): void {
  const own: Environment = preset.testnet ? 'testnet' : 'mainnet';
  if (own !== network)
    throw new UserError(
      `--preset ${name} is a ${own} network and this install's network is ${network}: give a ${network} preset, or --network ${own} for a new install`,
    );
}

/**
 * One `chains:` entry for `preset` (two spaces in, as a list item): the preset's name and the
 * node, with what the preset fills said in a comment. Checked by parsing it back before use.
 */
export function presetChainBlock(p: InitPreset): string {
  const { preset } = p;
  const tokens = preset.tokens.map((t) => `${t.ticker} (${t.decimals} decimals)`).join(', ') || 'no USDT or USDC';
  const block = [
    `  # ${preset.display_name}: chain id ${preset.chain_id}, ${preset.native.ticker}, ${tokens}; ${preset.confirmations} confirmations,`,
    `  # fee model ${preset.fee_model}. Any key given here overrides the preset (docs/chains-evm.md).`,
    `  - preset: ${p.name}`,
    `    rpc_url: ${JSON.stringify(p.rpcUrl)}  # the ${preset.display_name} node's JSON-RPC URL`,
    '',
  ].join('\n');
  configFromText(`chains:\n${block}`);
  return block;
}

/** The example config as `coinkeep init` writes it: its network, and the preset's chain in place of `chains: []`. */
export function initConfigText(example: string, network: Environment, preset: InitPreset | undefined): string {
  let text = example.replace(/^network: \w+/m, `network: ${network}`);
  if (preset) {
    if (!/^chains: \[\]$/m.test(text)) throw new Error('the example config has no `chains: []` line');
    text = text.replace(/^chains: \[\]$/m, () => `chains:\n${presetChainBlock(preset).trimEnd()}`);
  }
  return text;
}
