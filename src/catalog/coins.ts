import { ConfigError, KNOWN_FIATS, type ChainConfig, type Config } from '../config/schema';
import { uuidv5 } from '../shared/ids';

/**
 * Namespace of coin ids (PRODUCT §2): a coin id is UUIDv5 of `<chain id>:<asset>` under it, so the
 * same configuration gives the same ids on every install. Never change it.
 */
export const COIN_NAMESPACE = '589b6e6e-92cb-497a-b694-e1fc9835df50';

export const NATIVE_ASSET = 'native';

export interface Coin {
  id: string;
  /** The config chain id (`ethereum`). */
  chain_id: string;
  /** `native`, or the token contract exactly as configured. */
  asset: string;
  ticker: string;
  name: string;
  /** The chain id from the config: what responses call `network`. */
  network: string;
  decimals: number;
  invoice_enabled: boolean;
  family: ChainConfig['kind'];
}

export interface Fiat {
  code: string;
  decimals: number;
  invoice_enabled: boolean;
}

/** A coin's name when the config gives none (a preset gives its own: src/chains/evm/presets.ts). */
const DEFAULT_NAMES: Record<string, string> = {
  BTC: 'Bitcoin',
  ETH: 'Ether',
  TRX: 'Tron',
  USDT: 'Tether USD',
  USDC: 'USD Coin',
  BNB: 'BNB',
  POL: 'Polygon',
  AVAX: 'Avalanche',
};

export const coinId = (chainId: string, asset: string): string => uuidv5(`${chainId}:${asset}`, COIN_NAMESPACE);

/** The coins of the configured chains and the enabled fiats, with each coin's maintenance flag. */
export class Catalog {
  readonly defaultFiat: string;
  private readonly list: readonly Coin[];
  private readonly byId = new Map<string, Coin>();
  private readonly natives = new Map<string, Coin>();
  private readonly fiatList: readonly Fiat[];
  private readonly maintenance = new Set<string>();
  private version = 0;

  constructor(chains: readonly ChainConfig[], fiat: Config['fiat']) {
    const coins: Coin[] = [];
    chains.forEach((chain, i) => {
      const add = (asset: string, a: { ticker: string; decimals: number; name?: string; invoice_enabled: boolean }, key: string) => {
        const coin: Coin = {
          id: coinId(chain.id, asset),
          chain_id: chain.id,
          asset,
          ticker: a.ticker,
          name: a.name ?? DEFAULT_NAMES[a.ticker] ?? a.ticker,
          network: chain.id,
          decimals: a.decimals,
          invoice_enabled: a.invoice_enabled,
          family: chain.kind,
        };
        if (this.byId.has(coin.id)) throw new ConfigError(key, `duplicate asset ${asset} on chain ${chain.id}`);
        this.byId.set(coin.id, coin);
        coins.push(coin);
      };
      add(NATIVE_ASSET, chain.native, `chains[${i}].native`);
      this.natives.set(chain.id, coins[coins.length - 1]!);
      chain.tokens.forEach((t, j) => add(t.contract, t, `chains[${i}].tokens[${j}].contract`));
    });
    this.list = coins;
    this.fiatList = fiat.enabled.map((code) => ({ code, decimals: KNOWN_FIATS[code] ?? 2, invoice_enabled: true }));
    this.defaultFiat = fiat.default;
  }

  coins(): readonly Coin[] {
    return this.list;
  }

  coin(id: string): Coin | undefined {
    return this.byId.get(id);
  }

  /** A configured chain's native coin (its id is a hash: looked up here, not computed per call). */
  nativeOf(chainId: string): Coin | undefined {
    return this.natives.get(chainId);
  }

  coinsByTicker(ticker: string): Coin[] {
    return this.list.filter((c) => c.ticker === ticker);
  }

  /** Distinct tickers, in catalogue order: what the rate engine prices. */
  tickers(): string[] {
    return [...new Set(this.list.map((c) => c.ticker))];
  }

  fiats(): readonly Fiat[] {
    return this.fiatList;
  }

  isFiat(code: string): boolean {
    return this.fiatList.some((f) => f.code === code);
  }

  setMaintenance(coinId: string, on: boolean): void {
    if (!this.byId.has(coinId)) throw new Error(`unknown coin ${coinId}`);
    if (this.maintenance.has(coinId) === on) return;
    if (on) this.maintenance.add(coinId);
    else this.maintenance.delete(coinId);
    this.version++;
  }

  inMaintenance(coinId: string): boolean {
    return this.maintenance.has(coinId);
  }

  /** Grows on every maintenance change, so readers can cache what they derive from the flags. */
  get maintenanceVersion(): number {
    return this.version;
  }
}
