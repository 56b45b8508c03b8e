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
}

export interface ChainConfig {
  id: string;
  kind: 'btc' | 'evm' | 'tron';
  network?: string;
  chain_id?: number;
  rpc_url?: string;
  full_node_url?: string;
  confirmations: number;
  native: { ticker: string; decimals: number; name?: string; invoice_enabled: boolean };
  tokens: TokenConfig[];
  /** Extra adapter settings (address parameters, reorg depth...) checked by the chain issues. */
  options: Record<string, unknown>;
}

export type RateSourceConfig =
  | { kind: 'fixed'; rates: Record<string, Record<string, string>> }
  | { kind: 'coinbase' | 'kraken' | 'coingecko'; url: string; timeout_ms: number };

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
  trust_proxy: boolean;
  log_level: 'debug' | 'info' | 'warn' | 'error';
  chains: ChainConfig[];
  rates: RatesConfig;
  fiat: { enabled: string[]; default: string };
  webhooks: { allow_private_targets: boolean };
}

export class ConfigError extends Error {
  constructor(readonly key: string, reason: string) {
    super(`${key}: ${reason}`);
    this.name = 'ConfigError';
  }
}

/** Fiat currencies the product knows, with their fractional digits (ISO 4217). */
export const KNOWN_FIATS: Record<string, number> = { USD: 2, EUR: 2, UAH: 2, GBP: 2, CAD: 2, JPY: 0 };

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  constructor(private readonly obj: Obj, private readonly path: string) {}

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
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw new ConfigError(this.key(k), `must be an integer from ${min} to ${max}`);
    return v;
  }

  num(k: string, def: number, min: number, max: number): number {
    const v = this.obj[k] ?? def;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      throw new ConfigError(this.key(k), `must be a number from ${min} to ${max}`);
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
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
      throw new ConfigError(this.key(k), 'must be a list of strings');
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

const TICKER_RE = /^[A-Z0-9]{2,10}$/;
const CHAIN_ID_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

function readAsset(r: Reader, defaults: { ticker?: string; decimals?: number }) {
  const ticker = r.str('ticker', defaults.ticker);
  if (!TICKER_RE.test(ticker)) throw new ConfigError(r.key('ticker'), 'must be 2 to 10 upper-case letters or digits');
  return {
    ticker,
    decimals: r.int('decimals', defaults.decimals, 0, 18),
    name: r.optStr('name'),
    invoice_enabled: r.bool('invoice_enabled', true),
  };
}

const NATIVE_DEFAULTS: Record<ChainConfig['kind'], { ticker: string; decimals: number }> = {
  btc: { ticker: 'BTC', decimals: 8 },
  evm: { ticker: 'ETH', decimals: 18 },
  tron: { ticker: 'TRX', decimals: 6 },
};

function readChain(r: Reader): ChainConfig {
  const id = r.str('id');
  if (!CHAIN_ID_RE.test(id)) throw new ConfigError(r.key('id'), 'must be lower-case letters, digits, - or _');
  const kind = r.oneOf('kind', ['btc', 'evm', 'tron'] as const);
  const chain: ChainConfig = {
    id,
    kind,
    network: r.optStr('network'),
    chain_id: r.raw('chain_id') === undefined ? undefined : r.int('chain_id', undefined, 1, Number.MAX_SAFE_INTEGER),
    rpc_url: httpUrl(r, 'rpc_url', kind !== 'tron'),
    full_node_url: httpUrl(r, 'full_node_url', kind === 'tron'),
    confirmations: r.int('confirmations', 1, 0, 1000),
    native: readAsset(r.child('native'), NATIVE_DEFAULTS[kind]),
    tokens: r.list('tokens').map((t) => ({ ...readAsset(t, {}), contract: t.str('contract') })),
    options: (r.raw('options') as Record<string, unknown> | undefined) ?? {},
  };
  if (kind === 'btc') r.oneOf('network', ['mainnet', 'testnet', 'signet', 'regtest'] as const);
  if (kind === 'evm' && chain.chain_id === undefined) throw new ConfigError(r.key('chain_id'), 'is required for evm chains');
  return chain;
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
        if (typeof s !== 'string' || !DECIMAL_RE.test(s) || /^0(\.0+)?$/.test(s))
          throw new ConfigError(row.key(fiat), 'must be a positive decimal');
        if (!fiats.includes(fiat)) throw new ConfigError(row.key(fiat), 'is not an enabled fiat');
        out[ticker][fiat] = s;
      }
      void perFiat;
    }
    return { kind, rates: out };
  }
  return { kind, url: httpUrl(r, 'url', true)!, timeout_ms: r.int('timeout_ms', 5000, 100, 60000) };
}

export function parseConfig(input: unknown): Config {
  const r = Reader.root(input);
  r.unknownKeys([
    'network', 'data_dir', 'listen', 'base_url', 'database', 'trust_proxy', 'log_level',
    'chains', 'rates', 'fiat', 'webhooks',
  ]);
  const network = r.oneOf('network', ['mainnet', 'testnet'] as const, 'testnet');
  const data_dir = r.str('data_dir', './data');
  const listenR = r.child('listen');
  const listen = { host: listenR.str('host', '127.0.0.1'), port: listenR.int('port', 8420, 0, 65535) };
  const base_url = httpUrl(r, 'base_url', false) ?? `http://${listen.host}:${listen.port}`;
  const dbR = r.child('database');
  const dbUrl = dbR.str('url', `sqlite:${data_dir.replace(/\/$/, '')}/coinkeep.db`);
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(dbUrl))
    throw new ConfigError('database.url', 'must be sqlite:PATH or postgres://...');

  const fiatR = r.child('fiat');
  const enabled = fiatR.strList('enabled', ['USD', 'EUR', 'UAH', 'GBP', 'CAD', 'JPY']);
  enabled.forEach((f, i) => {
    if (!(f in KNOWN_FIATS)) throw new ConfigError(`fiat.enabled[${i}]`, `unknown fiat ${JSON.stringify(f)}`);
  });
  if (enabled.length === 0) throw new ConfigError('fiat.enabled', 'must list at least one fiat');
  const def = fiatR.str('default', enabled[0]);
  if (!enabled.includes(def)) throw new ConfigError('fiat.default', 'must be one of fiat.enabled');

  const chains = r.list('chains').map(readChain);
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
    trust_proxy: r.bool('trust_proxy', false),
    log_level: r.oneOf('log_level', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    chains,
    rates,
    fiat: { enabled, default: def },
    webhooks: { allow_private_targets: r.child('webhooks').bool('allow_private_targets', false) },
  };
}
