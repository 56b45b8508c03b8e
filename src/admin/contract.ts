/**
 * The admin API's request and response types: what the CLI (and later the dashboard) imports to
 * read the admin socket, instead of reaching into domain code. The routes answer these shapes.
 */
import type { ChainStatus } from '../chains/chain-watcher';
import type { VerifyReport } from '../ledger/verify';
import type { CallbackSecretView } from '../webhooks/callback-secret';
import type { DeliveryView } from '../webhooks/delivery.service';
import type { GasStationStatus } from '../payouts/evm/evm-chain-payouts';

export type { CallbackSecretView, ChainStatus, DeliveryView, GasStationStatus, VerifyReport };

/** GET /admin/status. */
export interface StatusResponse {
  status: 'running';
  pid: number;
  network: string;
  api_url: string;
  base_url: string;
  data_dir: string;
  database: 'sqlite' | 'postgres';
  started_at: string;
  uptime_seconds: number;
  chains: ChainStatus[];
  /** Each EVM chain's gas station: its balance, and a warning when it cannot pay the next sweeps and payouts. */
  gas_stations?: GasStationStatus[];
}

/** GET /admin/wallet/gas-station/{chain}. */
export interface GasStationResponse extends GasStationStatus {
  path: string;
}

/** GET /admin/accounts/{account}/webhooks/deliveries. */
export interface DeliveryPage {
  items: DeliveryView[];
  next_cursor: string | null;
}

/** POST .../deliveries/{id}/replay and POST .../endpoints/{id}/ping. */
export interface DeliveryResponse {
  delivery: DeliveryView;
}

/** POST .../deliveries/replay-exhausted. */
export interface ReplayExhaustedResponse {
  replayed: number;
}

/** POST .../callback-secret. */
export interface CallbackSecretResponse {
  callback_secret: CallbackSecretView;
}

/** POST /admin/wallet/backup. */
export interface WalletBackupResponse {
  fingerprint: string;
  words: number;
  mnemonic: string;
}
