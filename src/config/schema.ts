import { isIP } from 'node:net';
import { EVM_FEE_MODELS, EVM_PRESET_NAMES, evmPreset, type EvmFeeModel, type EvmPreset } from '../chains/evm/presets';

export type { EvmFeeModel };

/**
 * The configuration file's shape and its validation. Every problem is reported as one line naming
 * the key path and the reason (`chains[0].rpc_url: must be an http(s) URL`).
 */
export type Environment = 'mainnet' | 'testnet';

export interface TokenConfig {
  ticker: string;
  contract: string;
  decimals: number;
  name?: string;
  invoice_enabled: boolean;
  /** The config key its `decimals` come from (`chains[0].tokens[1].decimals`, or `chains[0].preset`): what a mismatch with the contract names. */
  decimals_key?: string;
}

/** How the chain core watches a chain; from the chain's `options`, checked at load. */
export interface ChainWatchOptions {
  /** Deepest reorganisation the core follows; a deeper one stops the chain's scanning (docs/chains.md). */
  reorg_max_depth: number;
  poll_interval_ms: number;
  /** Blocks fetched per request while catching up. */
  batch_size: number;
  /** First block a fresh cursor scans; null: the node's tip when the cursor is created. */
  start_height: number | null;
  /** A tip unchanged this long counts as a stalled node; 0 never (chains mined on demand). */
  stall_seconds: number;
  /** Every node request is abandoned after this long. */
  rpc_timeout_ms: number;
  /** tron: the chain's block time (3000); polls go just after each block is due by the tip's timestamp. 0 or absent: every poll_interval_ms. */
  block_time_ms?: number;
  /** btc: ask the node for new blocks by its long poll `waitfornewblock` beside polling (true; a node without it is polled only). */
  wait_for_blocks?: boolean;
}

/** One node a chain reads from and sends through (PRODUCT §15). */
export interface NodeEndpoint {
  url: string;
  /** tron: a hosted node's API key for this endpoint (the chain's `api_key` when not given). */
  api_key?: string;
  /** A hosted quota: the chain's polling is paced to stay under it; null: none. */
  requests_per_day: number | null;
}

/** How a chain's nodes are used (PRODUCT §15): several endpoints, quorum, learned limits' bounds, maintenance and staleness. */
export interface ChainNodes {
  /** `rpc_urls` / `full_node_urls`, or the single `rpc_url` / `full_node_url`, in order: the first healthy one is used. */
  endpoints: NodeEndpoint[];
  /** A block counts toward confirmations only when this many endpoints report the same hash at its height (default 1). */
  quorum: number;
  /** The most calls one batched request may carry (a learned size shrinks under it on the node's refusals). */
  max_batch: number;
  /** evm: the most blocks one `eth_getLogs` may span (a learned range shrinks under it). */
  logs_range: number;
  /** The chain's coins go to maintenance only after this long without a successful read (a node on the wrong network: at once). */
  maintenance_after_seconds: number;
  /** A node whose newest block is older than this is stale (another endpoint is used, else maintenance); null: never (chains mined on demand). */
  stale_after_seconds: number | null;
}

export interface ChainConfig {
  id: string;
  kind: 'btc' | 'evm' | 'tron';
  /** evm only: the built-in network the chain was filled from (src/chains/evm/presets.ts); fields given override it. */
  preset?: string;
  network?: string;
  chain_id?: number;
  rpc_url?: string;
  /**
   * evm only: the node's WebSocket endpoint (ws: or wss:). New heads pushed there (`newHeads`) wake
   * the scanner at once; polling `rpc_url` stays the fallback and the truth (issue 35).
   */
  ws_url?: string;
  full_node_url?: string;
  /** tron only: a hosted node's API key, sent as the `TRON-PRO-API-KEY` header. */
  api_key?: string;
  /** Every node of the chain and how they are used (`rpc_url` / `full_node_url` is the first). */
  nodes: ChainNodes;
  confirmations: number;
  native: { ticker: string; decimals: number; name?: string; invoice_enabled: boolean };
  tokens: TokenConfig[];
  /** Extra adapter settings (address parameters, reorg depth...) checked by the chain issues. */
  options: Record<string, unknown>;
  /** The chain core's settings, read from `options`. */
  watch: ChainWatchOptions;
  /** btc chains only: fee estimation, read from `options`. */
  fees?: BtcFeeOptions;
  /** evm chains only: sweeps and payouts (PRODUCT §8a). */
  evm?: EvmPayoutOptions;
  /** tron chains only: sweeps, energy and payouts (PRODUCT §8a). */
  tron?: TronPayoutOptions;
  /** `payouts` of the chain: its fee ceiling and replacement wait (PRODUCT §14). */
  payouts: ChainPayoutOptions;
}

/** A chain's `payouts` block (PRODUCT §14 "Fees have ceilings"). */
export interface ChainPayoutOptions {
  /**
   * `max_fee`: the most the daemon pays on this chain, in base units of the chain's fee: btc sat/vB
   * (of every payout and replacement); evm wei per gas (configured in gwei), the fee cap of every
   * transaction it sends; tron sun (configured in TRX) one transfer from a wallet address may burn,
   * its fee_limit included. A quote above it waits; nothing is sent above it.
   */
  max_fee: bigint;
  /** `replace_after_blocks`: this chain's wait before a stuck transaction is replaced (default `payouts.replace_after_blocks`). */
  replace_after_blocks: number;
}

/** How a Tron chain's deposits are swept and its transfers get their energy (`sweep` of the chain, `options.tx_expiration_seconds`). */
export interface TronPayoutOptions {
  sweep_min: Record<string, string>;
  /**
   * `sweep.max_burn` (TRX, default 0): the most TRX one token sweep or token payout may burn for its
   * energy when the gas station's staked energy cannot be delegated to it; 0: it waits for staked energy.
   */
  max_burn_sun: bigint;
  /** `sweep.stake` (TRX, default 0): what the gas station keeps staked for energy; the daemon freezes up to it from the station's balance. */
  stake_sun: bigint;
  /**
   * `sweep.token_energy` (default 65000): the energy a token payout's network fee reserves when the
   * treasury cannot dry-run the transfer yet (its deposits not swept): about a USDT transfer to a
   * new holder on mainnet.
   */
  token_energy: number;
  /** `options.tx_expiration_seconds` (default 600, at most 86400): how long after the head block a signed transaction may still be mined. */
  expiration_ms: number;
}

/** How an EVM chain's deposits are swept into the treasuries. */
export interface EvmPayoutOptions {
  /** Per coin ticker of the chain: a deposit address is swept once it holds at least this much credited (decimal string; default 0). */
  sweep_min: Record<string, string>;
  /** `fee_model`: how the chain prices and books gas (default eip1559, or the preset's). */
  fee_model: EvmFeeModel;
}

/** How a btc chain's fee rate is estimated (the node's `estimatesmartfee`). */
export interface BtcFeeOptions {
  /** Confirmation target in blocks asked of the node. */
  target_blocks: number;
  /** The rate used when the node has no estimate (regtest, a node just started), sat/vB; at most the chain's `payouts.max_fee`. */
  fallback_sat_vb: number;
}

export type RateSourceConfig =
  { kind: 'fixed'; rates: Record<string, Record<string, string>> } | { kind: 'coinbase' | 'kraken' | 'coingecko'; url: string; timeout_ms: number };

export interface RatesConfig {
  sources: RateSourceConfig[];
  refresh_seconds: number;
  max_age_seconds: number;
  max_divergence_percent: number;
}

export interface Config {
  network: Environment;
  data_dir: string;
  listen: { host: string; port: number };
  base_url: string;
  database: { url: string };
  /** Proxy hops in front of the daemon (0: none): the client IP is the N-th X-Forwarded-For address from the right. */
  trust_proxy: number;
  log_level: 'debug' | 'info' | 'warn' | 'error';
  chains: ChainConfig[];
  rates: RatesConfig;
  fiat: { enabled: string[]; default: string };
  webhooks: WebhooksConfig;
  static_addresses: StaticAddressesConfig;
  payouts: PayoutsConfig;
  /** Refunds (PRODUCT §16): how long a payer link waits unused for the payer's address, in hours. */
  refunds: { link_ttl_hours: number };
  /** Cold storage (PRODUCT §18): how often the forwarding job looks at the accounts' rules, in seconds. */
  custody: { interval_seconds: number };
  /** `GET /metrics` (Prometheus) on its own listener; null (the default): off. */
  metrics: { listen: { host: string; port: number } | null };
  /** The signer process (PRODUCT §18, docs/custody.md). */
  signer: SignerConfig;
}

/** `signer`: the process that alone holds the wallet seed. */
export interface SignerConfig {
  /** A signer run apart: its Unix socket. null (the default): the daemon starts its own, on `<data_dir>/signer.sock`. */
  socket: string | null;
  /** Per coin ticker: what the signer signs to withdrawals' destinations in a rolling hour, valued in `fiat.default` (a decimal string); a coin absent has no hourly limit. */
  max_per_hour: Record<string, string>;
}

export interface PayoutsConfig {
  /** `false`: no payout worker runs (withdrawals wait in `pending`); everything else goes on. */
  enabled: boolean;
  /**
   * Per coin ticker: the largest withdrawal, valued in `fiat.default`, that goes out without a
   * person's review; a larger one waits in `review` (`signer_limit`). A decimal string.
   */
  max_per_transaction: Record<string, string>;
  /** An account's pending withdrawals wait this long (seconds, fractions allowed) for others to join one batched payout. */
  batch_window_seconds: number;
  /** A payout transaction not mined this many blocks after its broadcast is replaced with a higher fee; a chain's `payouts.replace_after_blocks` overrides it. */
  replace_after_blocks: number;
  /** A payout not mined this many minutes (fractions allowed) after its first broadcast is named in `coinkeep status`, the dashboard and the metrics (PRODUCT §14). */
  stuck_alert_minutes: number;
}

export interface StaticAddressesConfig {
  /** An active static address without a deposit, creation or restore for this long is archived (fractions allowed). */
  archive_after_days: number;
  /** How often archived addresses are checked for transfers (the slow scan), in hours (fractions allowed). */
  archived_scan_hours: number;
}

export interface WebhooksConfig {
  allow_private_targets: boolean;
  /** Where host names of webhook targets are resolved (the target guard's own DNS queries). */
  dns: { servers: string[]; timeout_ms: number };
}

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`${key}: ${reason}`);
    this.name = 'ConfigError';
  }
}

/** Fiat currencies the product knows, with their fractional digits (ISO 4217). */
export const KNOWN_FIATS: Record<string, number> = { USD: 2, EUR: 2, UAH: 2, GBP: 2, CAD: 2, JPY: 0 };

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  constructor(
    private readonly obj: Obj,
    private readonly path: string,
  ) {}

  static root(v: unknown): Reader {
    if (v === null || v === undefined) return new Reader({}, '');
    if (!isObj(v)) throw new ConfigError('(file)', 'must be a YAML mapping');
    return new Reader(v, '');
  }

  key(k: string): string {
    return this.path ? `${this.path}.${k}` : k;
  }

  unknownKeys(allowed: string[]): void {
    for (const k of Object.keys(this.obj)) if (!allowed.includes(k)) throw new ConfigError(this.key(k), 'unknown key');
  }

  raw(k: string): unknown {
    return this.obj[k];
  }

  str(k: string, def?: string): string {
    const v = this.obj[k];
    if (v === undefined || v === null) {
      if (def !== undefined) return def;
      throw new ConfigError(this.key(k), 'is required');
    }
    if (typeof v !== 'string' || v.length === 0) throw new ConfigError(this.key(k), 'must be a non-empty string');
    return v;
  }

  optStr(k: string): string | undefined {
    return this.obj[k] === undefined || this.obj[k] === null ? undefined : this.str(k);
  }

  int(k: string, def: number | undefined, min: number, max: number): number {
    const v = this.obj[k];
    if (v === undefined || v === null) {
      if (def !== undefined) return def;
      throw new ConfigError(this.key(k), 'is required');
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ConfigError(this.key(k), `must be an integer from ${min} to ${max}`);
    return v;
  }

  num(k: string, def: number, min: number, max: number): number {
    const v = this.obj[k] ?? def;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new ConfigError(this.key(k), `must be a number from ${min} to ${max}`);
    return v;
  }

  bool(k: string, def: boolean): boolean {
    const v = this.obj[k] ?? def;
    if (typeof v !== 'boolean') throw new ConfigError(this.key(k), 'must be true or false');
    return v;
  }

  oneOf<T extends string>(k: string, options: readonly T[], def?: T): T {
    const v = this.str(k, def);
    if (!options.includes(v as T)) throw new ConfigError(this.key(k), `must be one of ${options.join(', ')}`);
    return v as T;
  }

  child(k: string, required = false): Reader {
    const v = this.obj[k];
    if (v === undefined || v === null) {
      if (required) throw new ConfigError(this.key(k), 'is required');
      return new Reader({}, this.key(k));
    }
    if (!isObj(v)) throw new ConfigError(this.key(k), 'must be a mapping');
    return new Reader(v, this.key(k));
  }

  list(k: string): Reader[] {
    const v = this.obj[k];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new ConfigError(this.key(k), 'must be a list');
    return v.map((item, i) => {
      if (!isObj(item)) throw new ConfigError(`${this.key(k)}[${i}]`, 'must be a mapping');
      return new Reader(item, `${this.key(k)}[${i}]`);
    });
  }

  strList(k: string, def: string[]): string[] {
    const v = this.obj[k] ?? def;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ConfigError(this.key(k), 'must be a list of strings');
    return v as string[];
  }
}

const httpUrl = (r: Reader, k: string, required: boolean): string | undefined => {
  const v = required ? r.str(k) : r.optStr(k);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(r.key(k), 'must be an http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(r.key(k), 'must be an http(s) URL');
  return v;
};

const wsUrl = (r: Reader, k: string): string | undefined => {
  const v = r.optStr(k);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(r.key(k), 'must be a ws(s) URL');
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new ConfigError(r.key(k), 'must be a ws(s) URL');
  return v;
};

const TICKER_RE = /^[A-Z0-9]{2,10}$/;
const CHAIN_ID_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

function readAsset(r: Reader, defaults: { ticker?: string; decimals?: number; name?: string }) {
  const ticker = r.str('ticker', defaults.ticker);
  if (!TICKER_RE.test(ticker)) throw new ConfigError(r.key('ticker'), 'must be 2 to 10 upper-case letters or digits');
  return {
    ticker,
    decimals: r.int('decimals', defaults.decimals, 0, 18),
    name: r.optStr('name') ?? defaults.name,
    invoice_enabled: r.bool('invoice_enabled', true),
  };
}

/**
 * A chain's `tokens`. With a preset, the list merges into the preset's tokens by ticker: an entry
 * with a preset token's ticker overrides only the fields it gives (a `contract` of its own needs
 * its own `decimals`), `omit: true` leaves that token out, and an entry with another ticker is
 * added after the preset's. Each token remembers the key its decimals come from.
 */
function readTokens(r: Reader, preset: EvmPreset | undefined): TokenConfig[] {
  const out: TokenConfig[] = (preset?.tokens ?? []).map((t) => ({
    ticker: t.ticker,
    contract: t.contract,
    decimals: t.decimals,
    name: t.name,
    invoice_enabled: true,
    decimals_key: r.key('preset'),
  }));
  const merged = new Set<string>();
  const omitted = new Set<string>();
  const added: TokenConfig[] = [];
  for (const t of r.list('tokens')) {
    const base = preset ? out.find((p) => p.ticker === t.raw('ticker')) : undefined;
    if (t.raw('omit') != null) {
      const omit = t.bool('omit', false);
      if (!base)
        throw new ConfigError(
          t.key('omit'),
          `is for a token of the preset only (${preset ? `its tokens: ${out.map((p) => p.ticker).join(', ') || 'none'}` : 'no preset given'})`,
        );
      if (omit) {
        if (Object.keys((t as unknown as { obj: Obj }).obj).some((k) => k !== 'ticker' && k !== 'omit'))
          throw new ConfigError(t.key('omit'), 'leaves the token out: give no other field with it');
        omitted.add(base.ticker);
        continue;
      }
    }
    if (base) {
      if (merged.has(base.ticker)) throw new ConfigError(t.key('ticker'), `${base.ticker} of the preset is given twice`);
      merged.add(base.ticker);
      const ownContract = t.raw('contract') != null;
      const asset = readAsset(t, { ticker: base.ticker, decimals: ownContract ? undefined : base.decimals, name: base.name });
      Object.assign(base, {
        ...asset,
        contract: t.str('contract', base.contract),
        decimals_key: t.raw('decimals') != null ? t.key('decimals') : base.decimals_key,
      });
    } else added.push({ ...readAsset(t, {}), contract: t.str('contract'), decimals_key: t.key('decimals') });
  }
  return [...out.filter((t) => !omitted.has(t.ticker)), ...added];
}

const NATIVE_DEFAULTS: Record<ChainConfig['kind'], { ticker: string; decimals: number }> = {
  btc: { ticker: 'BTC', decimals: 8 },
  evm: { ticker: 'ETH', decimals: 18 },
  tron: { ticker: 'TRX', decimals: 6 },
};

/** A base58check Tron address: `T` and 33 base58 characters (its checksum is the adapter's to check). */
const TRON_ADDRESS_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** Keys of a chain's `options` the chain core reads; a family's adapter adds its own to this list. */
const WATCH_OPTION_KEYS = ['reorg_max_depth', 'poll_interval_ms', 'batch_size', 'start_height', 'stall_seconds', 'rpc_timeout_ms'];

/** A tron chain's own options: the genesis block id of a network without a preset (a private chain, the sandbox's). */
const TRON_OPTION_KEYS = ['genesis_block_id', 'tx_expiration_seconds', 'block_time_ms'];

/** A node stuck this long is in trouble; Bitcoin's blocks come far less regularly than the others'. */
const STALL_DEFAULTS: Record<ChainConfig['kind'], number> = { btc: 7200, evm: 600, tron: 300 };

/** Address parameters of a btc chain overriding its network preset (bcoin regtest: STACK.md). */
const BTC_ADDRESS_OPTION_KEYS = ['bech32', 'pub_key_hash', 'script_hash', 'wif'];

function readBtcAddressOptions(r: Reader): void {
  if (r.raw('bech32') != null && !/^[a-z]{1,20}$/.test(String(r.str('bech32')))) throw new ConfigError(r.key('bech32'), 'must be 1 to 20 lower-case letters');
  for (const k of BTC_ADDRESS_OPTION_KEYS.slice(1)) if (r.raw(k) != null) r.int(k, undefined, 0, 255);
}

const BTC_FEE_OPTION_KEYS = ['fee_target_blocks', 'fee_fallback_sat_vb', 'fee_max_sat_vb'];
/** A btc chain's watch options beside the shared ones: the node's long poll for new blocks. */
const BTC_WATCH_OPTION_KEYS = ['wait_for_blocks'];

function readBtcFeeOptions(r: Reader): BtcFeeOptions {
  return { target_blocks: r.int('fee_target_blocks', 6, 1, 1008), fallback_sat_vb: r.int('fee_fallback_sat_vb', 10, 1, BTC_MAX_FEE_RATE) };
}

/** Bitcoin Core's default `maxfeerate` (0.10 BTC/kvB): a node refuses to relay a payout above it. */
const BTC_MAX_FEE_RATE = 10_000;
/** Default ceilings of `chains[].payouts.max_fee`: sat/vB; gwei; TRX. */
const MAX_FEE_DEFAULTS = { btc: 500, evm: '500', tron: '100' } as const;

/**
 * A chain's `payouts` block. A btc chain's ceiling is an integer rate within what Bitcoin Core
 * accepts; `options.fee_max_sat_vb` is its older name (both given: they must agree), and the
 * fallback rate must fit under it. A tron chain's `sweep.max_burn` must fit under it too.
 */
function readChainPayouts(
  chain: Reader,
  kind: ChainConfig['kind'],
  defaults: { replace_after_blocks: number; fallback_sat_vb?: number; max_burn_sun?: bigint },
): ChainPayoutOptions {
  const r = chain.child('payouts');
  r.unknownKeys(['max_fee', 'replace_after_blocks']);
  const replace_after_blocks = r.int('replace_after_blocks', defaults.replace_after_blocks, 1, 1008);
  if (kind === 'evm') return { max_fee: positiveUnits(r, 'max_fee', 9, 'gwei', MAX_FEE_DEFAULTS.evm), replace_after_blocks };
  if (kind === 'tron') {
    const max_fee = positiveUnits(r, 'max_fee', 6, 'TRX', MAX_FEE_DEFAULTS.tron);
    if ((defaults.max_burn_sun ?? 0n) > max_fee)
      throw new ConfigError(chain.child('sweep').key('max_burn'), `must not be above payouts.max_fee (${r.raw('max_fee') ?? MAX_FEE_DEFAULTS.tron} TRX)`);
    return { max_fee, replace_after_blocks };
  }
  const options = chain.child('options');
  const rate = (reader: Reader, key: string): number | undefined => {
    const v = reader.raw(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v > BTC_MAX_FEE_RATE)
      throw new ConfigError(
        reader.key(key),
        `must be at most ${BTC_MAX_FEE_RATE} sat/vB: Bitcoin Core refuses transactions above its default maxfeerate (0.10 BTC/kvB)`,
      );
    return reader.int(key, undefined, 1, BTC_MAX_FEE_RATE);
  };
  const given = rate(r, 'max_fee');
  const older = rate(options, 'fee_max_sat_vb');
  if (given !== undefined && older !== undefined && given !== older)
    throw new ConfigError(r.key('max_fee'), `differs from ${options.key('fee_max_sat_vb')}, its older name: give one`);
  const fallback = defaults.fallback_sat_vb ?? 1;
  const max = given ?? older ?? Math.max(MAX_FEE_DEFAULTS.btc, fallback);
  if (max < fallback)
    throw new ConfigError(
      given !== undefined ? r.key('max_fee') : options.key('fee_max_sat_vb'),
      `must be at least ${options.key('fee_fallback_sat_vb')} (${fallback})`,
    );
  return { max_fee: BigInt(max), replace_after_blocks };
}

/** A decimal amount of a unit with `decimals` fractional digits (`gwei`, `TRX`), in its base units (wei, sun). */
function units(r: Reader, key: string, decimals: number, unit: string, def: string): bigint {
  const v = r.raw(key) ?? def;
  const text = typeof v === 'number' ? String(v) : v;
  if (typeof text !== 'string' || !new RegExp(`^\\d+(\\.\\d{1,${decimals}})?$`).test(text))
    throw new ConfigError(r.key(key), `must be an amount of ${unit} (0 or more, at most ${decimals} decimals)`);
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0'));
}

function positiveUnits(r: Reader, key: string, decimals: number, unit: string, def: string): bigint {
  const v = units(r, key, decimals, unit, def);
  if (v === 0n) throw new ConfigError(r.key(key), `must be an amount of ${unit} above 0`);
  return v;
}

function readTronOptions(chain: Reader, tickers: string[]): TronPayoutOptions {
  const sweep = chain.child('sweep');
  sweep.unknownKeys(['min', 'max_burn', 'stake', 'token_energy']);
  const trx = (key: string): bigint => units(sweep, key, 6, 'TRX', '0');
  return {
    sweep_min: sweepMin(sweep, tickers),
    max_burn_sun: trx('max_burn'),
    stake_sun: trx('stake'),
    token_energy: sweep.int('token_energy', 65_000, 1, 10_000_000),
    expiration_ms: chain.child('options').int('tx_expiration_seconds', 600, 10, 86_400) * 1000,
  };
}

function readEvmOptions(chain: Reader, tickers: string[], preset: EvmPreset | undefined): EvmPayoutOptions {
  const sweep = chain.child('sweep');
  sweep.unknownKeys(['min']);
  return { sweep_min: sweepMin(sweep, tickers), fee_model: chain.oneOf('fee_model', EVM_FEE_MODELS, preset?.fee_model ?? 'eip1559') };
}

/** `sweep.min`: per coin ticker of the chain, the credited amount a deposit address is swept at. */
function sweepMin(sweep: Reader, tickers: string[]): Record<string, string> {
  const raw = sweep.raw('min') ?? {};
  if (!isObj(raw)) throw new ConfigError(sweep.key('min'), 'must be a mapping of coin ticker to an amount');
  const min: Record<string, string> = {};
  for (const [ticker, v] of Object.entries(raw)) {
    const key = `${sweep.key('min')}.${ticker}`;
    if (!tickers.includes(ticker)) throw new ConfigError(key, 'must be a ticker of this chain');
    const text = typeof v === 'number' ? String(v) : v;
    if (typeof text !== 'string' || !DECIMAL_RE.test(text)) throw new ConfigError(key, 'must be an amount (0 or more)');
    min[ticker] = text;
  }
  return min;
}

function readWatchOptions(r: Reader, kind: ChainConfig['kind']): ChainWatchOptions {
  r.unknownKeys(
    kind === 'btc'
      ? [...WATCH_OPTION_KEYS, ...BTC_ADDRESS_OPTION_KEYS, ...BTC_FEE_OPTION_KEYS, ...BTC_WATCH_OPTION_KEYS]
      : kind === 'tron'
        ? [...WATCH_OPTION_KEYS, ...TRON_OPTION_KEYS]
        : WATCH_OPTION_KEYS,
  );
  if (kind === 'btc') readBtcAddressOptions(r);
  if (kind === 'tron' && r.raw('genesis_block_id') != null && !/^[0-9a-f]{64}$/.test(String(r.raw('genesis_block_id'))))
    throw new ConfigError(r.key('genesis_block_id'), 'must be 64 lower-case hex digits (the blockID of block 0)');
  return {
    reorg_max_depth: r.int('reorg_max_depth', 64, 1, 10000),
    poll_interval_ms: r.int('poll_interval_ms', kind === 'btc' ? 10000 : 3000, 50, 3600000),
    batch_size: r.int('batch_size', kind === 'btc' ? 10 : 100, 1, 1000),
    start_height: r.raw('start_height') == null ? null : r.int('start_height', undefined, 0, 2 ** 31 - 1),
    stall_seconds: r.int('stall_seconds', STALL_DEFAULTS[kind], 0, 604800),
    rpc_timeout_ms: r.int('rpc_timeout_ms', 10000, 100, 600000),
    ...(kind === 'tron' ? { block_time_ms: blockTime(r) } : {}),
    ...(kind === 'btc' ? { wait_for_blocks: r.bool('wait_for_blocks', true) } : {}),
  };
}

/** tron `options.block_time_ms`: 3000 (mainnet's and the test networks' slots), 0 to poll at a fixed interval, else 100 ms to 10 minutes. */
function blockTime(r: Reader): number {
  const ms = r.int('block_time_ms', 3000, 0, 600000);
  if (ms > 0 && ms < 100) throw new ConfigError(r.key('block_time_ms'), 'must be 0 (poll at a fixed interval) or at least 100');
  return ms;
}

/** A node older than this is stale, by kind, on public networks (PRODUCT §15). */
const STALE_DEFAULTS: Record<ChainConfig['kind'], number> = { btc: 7200, evm: 300, tron: 120 };
/** EVM chain ids of local development nodes (anvil, hardhat, ganache): they mine on demand. */
const LOCAL_EVM_CHAIN_IDS = [31337, 1337];

/**
 * `rpc_urls` / `full_node_urls` (strings, or `{url, requests_per_day, api_key}`), or the single
 * `rpc_url` / `full_node_url`; with the node settings of PRODUCT §15.
 */
function readNodes(r: Reader, kind: ChainConfig['kind'], local: boolean): ChainNodes {
  const single = kind === 'tron' ? 'full_node_url' : 'rpc_url';
  const many = kind === 'tron' ? 'full_node_urls' : 'rpc_urls';
  const endpoints: NodeEndpoint[] = [];
  const first = httpUrl(r, single, false);
  if (first !== undefined) endpoints.push({ url: first, requests_per_day: null });
  const given = r.raw(many) ?? [];
  if (!Array.isArray(given)) throw new ConfigError(r.key(many), 'must be a list');
  for (const [i, raw] of given.entries()) {
    const key = `${r.key(many)}[${i}]`;
    if (typeof raw !== 'string' && !isObj(raw)) throw new ConfigError(key, 'must be a URL or a mapping with url');
    const entry = new Reader(typeof raw === 'string' ? { url: raw } : raw, key);
    entry.unknownKeys(kind === 'tron' ? ['url', 'requests_per_day', 'api_key'] : ['url', 'requests_per_day']);
    endpoints.push({
      url: httpUrl(entry, 'url', true)!,
      ...(entry.optStr('api_key') !== undefined ? { api_key: entry.optStr('api_key') } : {}),
      requests_per_day: entry.raw('requests_per_day') == null ? null : entry.int('requests_per_day', undefined, 1, 1_000_000_000),
    });
  }
  if (endpoints.length === 0) throw new ConfigError(r.key(single), 'is required');
  const quorum = r.int('quorum', 1, 1, 16);
  if (quorum > endpoints.length) throw new ConfigError(r.key('quorum'), `must be at most the number of endpoints (${endpoints.length})`);
  return {
    endpoints,
    quorum,
    max_batch: r.int('max_batch', 100, 1, 1000),
    logs_range: r.int('logs_range', 100, 1, 100_000),
    maintenance_after_seconds: r.int('maintenance_after_seconds', 60, 0, 86_400),
    stale_after_seconds:
      r.raw('stale_after_seconds') === false
        ? null
        : r.raw('stale_after_seconds') == null
          ? local
            ? null
            : STALE_DEFAULTS[kind]
          : r.int('stale_after_seconds', undefined, 1, 604_800),
  };
}

/** `preset`: an evm chain's built-in network (src/chains/evm/presets.ts); an unknown name lists the known ones. */
function readPreset(r: Reader, kind: ChainConfig['kind']): EvmPreset | undefined {
  const name = r.optStr('preset');
  if (name === undefined) return undefined;
  if (kind !== 'evm') throw new ConfigError(r.key('preset'), 'is for evm chains only');
  const preset = evmPreset(name);
  if (!preset) throw new ConfigError(r.key('preset'), `unknown preset ${JSON.stringify(name)}: must be one of ${EVM_PRESET_NAMES.join(', ')}`);
  return preset;
}

function readChain(r: Reader, payouts: PayoutsConfig): ChainConfig {
  // A preset makes the chain an evm one and names it, unless `kind` and `id` say otherwise.
  const kind = r.oneOf('kind', ['btc', 'evm', 'tron'] as const, r.raw('preset') != null ? 'evm' : undefined);
  const preset = readPreset(r, kind);
  const id = r.str('id', preset ? (r.raw('preset') as string) : undefined);
  if (!CHAIN_ID_RE.test(id)) throw new ConfigError(r.key('id'), 'must be lower-case letters, digits, - or _');
  const chain: Omit<ChainConfig, 'payouts'> = {
    id,
    kind,
    ...(preset ? { preset: r.raw('preset') as string } : {}),
    network: r.optStr('network'),
    chain_id: r.raw('chain_id') === undefined ? preset?.chain_id : r.int('chain_id', undefined, 1, Number.MAX_SAFE_INTEGER),
    rpc_url: undefined,
    ...(r.raw('ws_url') != null ? { ws_url: wsUrl(r, 'ws_url') } : {}),
    full_node_url: undefined,
    api_key: r.optStr('api_key'),
    nodes: undefined as unknown as ChainNodes,
    confirmations: r.int('confirmations', preset?.confirmations ?? 1, 0, 1000),
    native: readAsset(r.child('native'), preset?.native ?? NATIVE_DEFAULTS[kind]),
    tokens: readTokens(r, preset),
    options: (r.raw('options') as Record<string, unknown> | undefined) ?? {},
    watch: readWatchOptions(r.child('options'), kind),
  };
  if (kind === 'btc') {
    r.oneOf('network', ['mainnet', 'testnet', 'signet', 'regtest'] as const);
    chain.fees = readBtcFeeOptions(r.child('options'));
  }
  // Chains mined on demand (regtest, local EVM nodes, a private Tron chain such as the sandbox's, known by its own genesis
  // block) have no newest-block age to watch. A Tron chain without `network` is mainnet, whose blocks come every 3 s.
  const local =
    kind === 'btc'
      ? chain.network === 'regtest'
      : kind === 'evm'
        ? LOCAL_EVM_CHAIN_IDS.includes(chain.chain_id ?? 0)
        : r.child('options').raw('genesis_block_id') != null;
  chain.nodes = readNodes(r, kind, local);
  if (kind === 'tron') chain.full_node_url = chain.nodes.endpoints[0]!.url;
  else chain.rpc_url = chain.nodes.endpoints[0]!.url;
  if (kind === 'tron' && r.raw('network') != null) r.oneOf('network', ['mainnet', 'nile', 'shasta'] as const);
  if (kind === 'tron')
    chain.tokens.forEach((t, i) => {
      if (!TRON_ADDRESS_RE.test(t.contract)) throw new ConfigError(`${r.key('tokens')}[${i}].contract`, 'must be a base58 Tron address (T...)');
    });
  if (kind !== 'evm' && chain.ws_url !== undefined) throw new ConfigError(r.key('ws_url'), 'is for evm chains only');
  if (kind !== 'tron' && chain.api_key !== undefined) throw new ConfigError(r.key('api_key'), 'is for tron chains only');
  if (kind === 'evm' && chain.chain_id === undefined) throw new ConfigError(r.key('chain_id'), 'is required for evm chains');
  if (kind !== 'evm' && r.raw('fee_model') !== undefined) throw new ConfigError(r.key('fee_model'), 'is for evm chains only');
  if (kind === 'evm') chain.evm = readEvmOptions(r, [chain.native.ticker, ...chain.tokens.map((t) => t.ticker)], preset);
  else if (kind === 'tron') chain.tron = readTronOptions(r, [chain.native.ticker, ...chain.tokens.map((t) => t.ticker)]);
  else if (r.raw('sweep') !== undefined) throw new ConfigError(r.key('sweep'), 'is for evm and tron chains only');
  return {
    ...chain,
    payouts: readChainPayouts(r, kind, {
      replace_after_blocks: payouts.replace_after_blocks,
      fallback_sat_vb: chain.fees?.fallback_sat_vb,
      max_burn_sun: chain.tron?.max_burn_sun,
    }),
  };
}

function readRateSource(r: Reader, fiats: string[]): RateSourceConfig {
  const kind = r.oneOf('kind', ['fixed', 'coinbase', 'kraken', 'coingecko'] as const);
  if (kind === 'fixed') {
    const rates = r.child('rates', true);
    const out: Record<string, Record<string, string>> = {};
    for (const [ticker, perFiat] of Object.entries((rates as unknown as { obj: Obj }).obj)) {
      const row = rates.child(ticker, true);
      out[ticker] = {};
      for (const [fiat, value] of Object.entries((row as unknown as { obj: Obj }).obj)) {
        const s = typeof value === 'number' ? String(value) : value;
        if (typeof s !== 'string' || !DECIMAL_RE.test(s) || /^0(\.0+)?$/.test(s)) throw new ConfigError(row.key(fiat), 'must be a positive decimal');
        if (!fiats.includes(fiat)) throw new ConfigError(row.key(fiat), 'is not an enabled fiat');
        out[ticker][fiat] = s;
      }
      void perFiat;
    }
    return { kind, rates: out };
  }
  return { kind, url: httpUrl(r, 'url', true)!, timeout_ms: r.int('timeout_ms', 5000, 100, 60000) };
}

/** `trust_proxy`: a hop count from 0 to 10; `true` is 1 (one proxy) and `false` 0. */
function proxyHops(r: Reader): number {
  const v = r.raw('trust_proxy');
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v !== undefined && v !== null && typeof v !== 'number')
    throw new ConfigError(r.key('trust_proxy'), 'must be a number of proxy hops from 0 to 10, or true (1) or false (0)');
  return r.int('trust_proxy', 0, 0, 10);
}

export function parseConfig(input: unknown): Config {
  const r = Reader.root(input);
  r.unknownKeys([
    'network',
    'data_dir',
    'listen',
    'base_url',
    'database',
    'trust_proxy',
    'log_level',
    'chains',
    'rates',
    'fiat',
    'webhooks',
    'static_addresses',
    'payouts',
    'refunds',
    'custody',
    'metrics',
    'signer',
  ]);
  const network = r.oneOf('network', ['mainnet', 'testnet'] as const, 'testnet');
  const data_dir = r.str('data_dir', './data');
  const listenR = r.child('listen');
  const listen = { host: listenR.str('host', '127.0.0.1'), port: listenR.int('port', 8420, 0, 65535) };
  const base_url = httpUrl(r, 'base_url', false) ?? `http://${listen.host}:${listen.port}`;
  const dbR = r.child('database');
  const dbUrl = dbR.str('url', `sqlite:${data_dir.replace(/\/$/, '')}/coinkeep.db`);
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(dbUrl)) throw new ConfigError('database.url', 'must be sqlite:PATH or postgres://...');

  const fiatR = r.child('fiat');
  const enabled = fiatR.strList('enabled', ['USD', 'EUR', 'UAH', 'GBP', 'CAD', 'JPY']);
  enabled.forEach((f, i) => {
    if (!(f in KNOWN_FIATS)) throw new ConfigError(`fiat.enabled[${i}]`, `unknown fiat ${JSON.stringify(f)}`);
  });
  if (enabled.length === 0) throw new ConfigError('fiat.enabled', 'must list at least one fiat');
  const def = fiatR.str('default', enabled[0]);
  if (!enabled.includes(def)) throw new ConfigError('fiat.default', 'must be one of fiat.enabled');

  const payouts = readPayouts(r.child('payouts'));
  const chains = r.list('chains').map((c) => readChain(c, payouts));
  const seen = new Set<string>();
  chains.forEach((c, i) => {
    if (seen.has(c.id)) throw new ConfigError(`chains[${i}].id`, `duplicate chain id ${c.id}`);
    seen.add(c.id);
  });

  const ratesR = r.child('rates');
  const rates: RatesConfig = {
    sources: ratesR.list('sources').map((s) => readRateSource(s, enabled)),
    refresh_seconds: ratesR.int('refresh_seconds', 30, 1, 86400),
    max_age_seconds: ratesR.int('max_age_seconds', 120, 1, 86400),
    max_divergence_percent: ratesR.num('max_divergence_percent', 1.5, 0, 100),
  };

  return {
    network,
    data_dir,
    listen,
    base_url: base_url.replace(/\/$/, ''),
    database: { url: dbUrl },
    trust_proxy: proxyHops(r),
    log_level: r.oneOf('log_level', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    chains,
    rates,
    fiat: { enabled, default: def },
    webhooks: readWebhooks(r.child('webhooks')),
    static_addresses: readStaticAddresses(r.child('static_addresses')),
    payouts,
    refunds: readRefunds(r.child('refunds')),
    custody: readCustody(r.child('custody')),
    metrics: readMetrics(r.child('metrics')),
    signer: readSigner(r.child('signer')),
  };
}

/** `signer.socket` and `signer.max_per_hour` (PRODUCT §18). */
function readSigner(r: Reader): SignerConfig {
  r.unknownKeys(['socket', 'max_per_hour']);
  const socket = r.raw('socket');
  if (socket !== undefined && socket !== null && (typeof socket !== 'string' || socket.trim() === ''))
    throw new ConfigError(r.key('socket'), "must be the path of the signer's Unix socket");
  return { socket: typeof socket === 'string' ? socket : null, max_per_hour: tickerAmounts(r, 'max_per_hour') };
}

/** A mapping of coin ticker to a positive amount in the default fiat (decimal strings). */
function tickerAmounts(r: Reader, name: string): Record<string, string> {
  const limits = r.raw(name) ?? {};
  if (!isObj(limits)) throw new ConfigError(r.key(name), 'must be a mapping of coin ticker to an amount in the default fiat');
  const out: Record<string, string> = {};
  for (const [ticker, v] of Object.entries(limits)) {
    const key = `${r.key(name)}.${ticker}`;
    if (!/^[A-Z0-9]{2,10}$/.test(ticker)) throw new ConfigError(key, 'must be a coin ticker (BTC, USDT, ...)');
    const text = typeof v === 'number' ? String(v) : v;
    if (typeof text !== 'string' || !/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0)
      throw new ConfigError(key, 'must be a positive amount in the default fiat');
    out[ticker] = text;
  }
  return out;
}

/** `refunds.link_ttl_hours`: 1 hour to 90 days, default a week (PRODUCT §16). */
function readRefunds(r: Reader): Config['refunds'] {
  r.unknownKeys(['link_ttl_hours']);
  return { link_ttl_hours: r.num('link_ttl_hours', 168, 1, 2160) };
}

/** `custody.interval_seconds`: 5 seconds to a day, default a minute (PRODUCT §18). */
function readCustody(r: Reader): Config['custody'] {
  r.unknownKeys(['interval_seconds']);
  return { interval_seconds: r.int('interval_seconds', 60, 5, 86400) };
}

/** `metrics.listen`: `host:port`, or a port alone (on 127.0.0.1); absent or null: no metrics listener. */
function readMetrics(r: Reader): Config['metrics'] {
  r.unknownKeys(['listen']);
  const v = r.raw('listen');
  if (v === undefined || v === null || v === false) return { listen: null };
  const bad = () => new ConfigError(r.key('listen'), 'must be host:port (127.0.0.1:9464, [::1]:9464) or a port number');
  const m = typeof v === 'string' ? /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(v) : null;
  if (typeof v !== 'number' && !m) throw bad();
  const host = m ? (m[1] ?? m[2]!) : '127.0.0.1';
  const port = m ? Number(m[3]) : (v as number);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || (typeof v === 'string' && isIP(host) === 0 && host !== 'localhost')) throw bad();
  return { listen: { host, port } };
}

function readPayouts(r: Reader): PayoutsConfig {
  r.unknownKeys(['enabled', 'max_per_transaction', 'batch_window_seconds', 'replace_after_blocks', 'stuck_alert_minutes']);
  const out = tickerAmounts(r, 'max_per_transaction');
  return {
    enabled: r.bool('enabled', true),
    max_per_transaction: out,
    batch_window_seconds: r.num('batch_window_seconds', 30, 0, 3600),
    replace_after_blocks: r.int('replace_after_blocks', 6, 1, 1008),
    stuck_alert_minutes: r.num('stuck_alert_minutes', 60, 0, 10080),
  };
}

function readStaticAddresses(r: Reader): StaticAddressesConfig {
  r.unknownKeys(['archive_after_days', 'archived_scan_hours']);
  const days = r.num('archive_after_days', 180, 0, 36500);
  if (days === 0) throw new ConfigError(r.key('archive_after_days'), 'must be greater than 0');
  const hours = r.num('archived_scan_hours', 24, 0, 500);
  if (hours === 0) throw new ConfigError(r.key('archived_scan_hours'), 'must be greater than 0');
  return { archive_after_days: days, archived_scan_hours: hours };
}

function readWebhooks(r: Reader): WebhooksConfig {
  r.unknownKeys(['allow_private_targets', 'dns']);
  const dnsR = r.child('dns');
  dnsR.unknownKeys(['servers', 'timeout_ms']);
  const servers = dnsR.strList('servers', []);
  servers.forEach((s, i) => {
    if (!isNameserver(s)) throw new ConfigError(`${dnsR.key('servers')}[${i}]`, 'must be an IP address, with a port as 1.2.3.4:53 or [::1]:53');
  });
  return {
    allow_private_targets: r.bool('allow_private_targets', false),
    dns: { servers, timeout_ms: dnsR.int('timeout_ms', 3000, 100, 30000) },
  };
}

/** A nameserver as c-ares takes it: an IP address, or one with a port (`1.2.3.4:53`, `[::1]:53`). */
function isNameserver(s: string): boolean {
  const withPort = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(s);
  if (withPort) return Number(withPort[3]) >= 1 && Number(withPort[3]) <= 65535 && isIP(withPort[1] ?? withPort[2]!) !== 0;
  return isIP(s) !== 0;
}
