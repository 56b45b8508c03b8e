import { CoinbaseFetcher } from './coinbase.source';
import { CoingeckoFetcher } from './coingecko.source';
import { KrakenFetcher } from './kraken.source';
import type { HttpRateSourceConfig, RateFetcher } from './rate-source';

export function createFetcher(source: HttpRateSourceConfig): RateFetcher {
  switch (source.kind) {
    case 'coinbase':
      return new CoinbaseFetcher(source.url, source.timeout_ms);
    case 'kraken':
      return new KrakenFetcher(source.url, source.timeout_ms);
    case 'coingecko':
      return new CoingeckoFetcher(source.url, source.timeout_ms);
  }
}
