/**
 * The admin API's request and response types: what the CLI (and later the dashboard) imports to
 * read the admin socket, instead of reaching into domain code. The routes answer these shapes.
 */
import type { ChainStatus } from '../chains/chain-watcher';
import type { ReconcileLine, ReconcileReport } from '../ledger/reconcile';
import type { VerifyReport } from '../ledger/verify';
import type { CallbackSecretView } from '../webhooks/callback-secret';
import type { DeliveryView } from '../webhooks/delivery.view';
import type { GasStationStatus } from '../chains/evm/payouts/evm-chain-payouts';
import type { FeeCeilingStatus } from '../payouts/fee-ceiling';
import type { PayoutAlert } from '../payouts/payout-alerts';
import type { PayoutCancelView } from '../payouts/payout-cancel';
import type { RefundDecision, RefundView } from '../refunds/refund.view';

export type {
  CallbackSecretView,
  ChainStatus,
  DeliveryView,
  FeeCeilingStatus,
  GasStationStatus,
  PayoutAlert,
  ReconcileLine,
  ReconcileReport,
  RefundDecision,
  RefundView,
  VerifyReport,
};

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
  /** Payouts stuck unmined past `payouts.stuck_alert_minutes`, being cancelled, or reopened lately (PRODUCT §14). */
  payout_alerts?: PayoutAlert[];
  /** Chains whose node asks a fee above their `payouts.max_fee`: what it asks, the ceiling, and what waits. */
  fee_ceilings?: FeeCeilingStatus[];
  /** The signer process (PRODUCT §18): while it is down, payouts wait. */
  signer?: SignerStatusView;
}

/** The signer as the daemon sees it: how it runs, whether it answers, and why not. */
export interface SignerStatusView {
  /** `child`: started by the daemon; `socket`: run apart (`signer.socket`); `in_process`: tests. */
  mode: 'child' | 'socket' | 'in_process';
  socket: string;
  up: boolean;
  fingerprint: string | null;
  /** The child's pid (child mode, while it runs). */
  pid: number | null;
  /** How many times the child was started again after it ended. */
  restarts: number;
  last_error: string | null;
}

/** POST /admin/payouts/{id}/cancel (`coinkeep payouts cancel`). */
export interface PayoutCancelResponse {
  payout: PayoutCancelView;
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

/** The screens of `coinkeep dashboard`; GET /admin/dashboard?screen= answers the one shown. */
export const DASHBOARD_SCREENS = ['overview', 'payments', 'approvals', 'webhooks', 'keys', 'log', 'refunds'] as const;
export type DashboardScreen = (typeof DASHBOARD_SCREENS)[number];

export interface DashboardAccount {
  id: string;
  name: string;
}

/** One coin's balance of one account. */
export interface DashboardBalance {
  account_id: string;
  coin_id: string;
  ticker: string | null;
  /** Hot: available in the processor. */
  available: string;
  hold: string;
  /**
   * Cold (PRODUCT §18): what cold storage forwarded of the coin, the sum of the account's completed
   * cold-storage withdrawals; null when the coin has no rule and never had a forward.
   */
  cold: string | null;
}

export interface DashboardOverview {
  chains: ChainStatus[];
  /**
   * The fee balances per chain: each EVM chain's gas station (its native coin, what the next sweeps
   * and token payouts need of it, and a warning when it cannot pay them). Tron's staked TRX and
   * free energy join when Tron pays out; a chain without a gas station has no row.
   */
  fee_balances: GasStationStatus[];
  /** Invoices created in the last hour, by status. */
  invoices_last_hour: Record<string, number>;
  /** Balances that are not zero. */
  balances: DashboardBalance[];
  webhook_queue: { pending: number; failing: number; exhausted: number };
  /** Withdrawals not yet final, by status. */
  payout_queue: Record<string, number>;
  /** The accounts' payouts stuck, being cancelled, or reopened lately (PRODUCT §14). */
  payout_alerts: PayoutAlert[];
  /** The signer: while it is down, payouts wait. */
  signer?: SignerStatusView;
}

export interface DashboardInvoice {
  id: string;
  account_id: string;
  status: string;
  amount: string;
  currency: string;
  ticker: string | null;
  amount_crypto: string | null;
  paid_amount: string;
  created_at: string;
}

/** An incoming payment: an invoice payment or a static-address deposit. */
export interface DashboardPayment {
  id: string;
  account_id: string;
  type: string;
  status: string;
  amount: string;
  ticker: string | null;
  confirmations: number | null;
  invoice_id: string | null;
  txid: string | null;
  created_at: string;
}

export interface DashboardWithdrawRequest {
  account_id: string;
  key_id: string;
  key_name: string;
  requested_by: string | null;
  requested_at: string | null;
}

export interface DashboardWithdrawal {
  id: string;
  account_id: string;
  status: string;
  amount: string;
  ticker: string | null;
  to_address: string;
  review_reason: string | null;
  created_at: string;
}

/** The Refunds screen (PRODUCT §16): invoices waiting for a decision, and refunds in flight or waiting for the payer's address. */
export interface DashboardRefunds {
  decisions: RefundDecision[];
  /** Each one with its account: the operator's view shows every account's. */
  open: Array<RefundView & { account_id: string }>;
}

export interface DashboardDelivery extends DeliveryView {
  account_id: string;
}

export interface DashboardEndpoint {
  id: string;
  account_id: string;
  url: string;
  enabled: boolean;
}

export interface DashboardKey {
  account_id: string;
  key_id: string;
  name: string;
  status: string;
  permissions: string[];
  withdraw_status: string;
  secret_last4: string;
  rotation_required: boolean;
  created_at: string;
  /** null: the daemon does not record a key's last use yet. */
  last_used_at: string | null;
}

export interface DashboardLogLine {
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

/** GET /admin/dashboard: the status line's facts always, and the data of the screen asked for. */
export interface DashboardSnapshot {
  at: string;
  daemon: { pid: number; network: string; database: 'sqlite' | 'postgres'; started_at: string; uptime_seconds: number };
  /** Every account (the data below is of the one asked for, or of all). */
  accounts: DashboardAccount[];
  overview?: DashboardOverview;
  payments?: { invoices: DashboardInvoice[]; payments: DashboardPayment[] };
  approvals?: { withdraw_requests: DashboardWithdrawRequest[]; withdrawals: DashboardWithdrawal[] };
  webhooks?: { deliveries: DashboardDelivery[]; endpoints: DashboardEndpoint[] };
  keys?: { items: DashboardKey[] };
  log?: { lines: DashboardLogLine[] };
  refunds?: DashboardRefunds;
}
