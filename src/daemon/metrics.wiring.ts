import type { Catalog } from '../catalog/coins';
import type { ChainCore } from '../chains/chain-core';
import type { Store } from '../db/store';
import { Metrics } from '../http/metrics';
import type { PayoutAlert } from '../payouts/payout-alerts';

/** Rows counted in the database are read at most this often, however often Prometheus scrapes. */
const DB_READ_EVERY_MS = 5000;

interface Parts {
  store: Store;
  chains: ChainCore;
  catalog: Catalog;
  /** The payouts to look at (PayoutAlert): stuck, being cancelled, reopened lately. */
  payoutAlerts: () => Promise<PayoutAlert[]>;
  /** Whether the signer answers (PRODUCT §18): payouts wait while it does not. */
  signerUp?: () => boolean;
}

/** Whether the daemon can serve: the store answers and every watched chain is past its first contact. */
export async function readiness(parts: Pick<Parts, 'store' | 'chains'>): Promise<{ ready: boolean; store: boolean; chains_waiting: string[] }> {
  const store = await parts.store.ping();
  // A chain is past first contact once it has a scan position (its own, or the scanning daemon's).
  const waiting = parts.chains.watchers
    .map((w) => w.status())
    .filter((s) => s.scanned_height === null)
    .map((s) => s.chain_id);
  return { ready: store && waiting.length === 0, store, chains_waiting: waiting };
}

/** The daemon's metrics (SPEC-independent, for operators): the API's requests and the parts' state. */
export function createMetrics(parts: Parts): Metrics {
  const metrics = new Metrics();
  const { store, chains, catalog } = parts;
  const coinLabels = (coinId: string | null): { coin: string; network: string } => {
    const c = coinId ? catalog.coin(coinId) : undefined;
    return c ? { coin: c.ticker, network: c.network } : { coin: coinId ? 'unknown' : 'unchosen', network: '' };
  };

  const chainGauge = (name: string, help: string, pick: (s: ReturnType<ChainCore['status']>[number]) => number | null) =>
    metrics.add({
      name,
      help,
      labels: ['chain'],
      read: () =>
        chains.status().flatMap((s) => {
          const v = pick(s);
          return v === null ? [] : [{ labels: { chain: s.chain_id }, value: v }];
        }),
    });
  chainGauge('coinkeep_chain_tip_height', "The node's tip height, per chain", (s) => s.node_tip);
  chainGauge('coinkeep_chain_scanned_height', 'The last scanned block height, per chain', (s) => s.scanned_height);
  chainGauge('coinkeep_chain_lag_blocks', 'Blocks between the node tip and the scan, per chain', (s) => s.lag);
  chainGauge('coinkeep_chain_maintenance', "1 while the chain's coins are in maintenance", (s) => (s.maintenance ? 1 : 0));
  const { signerUp } = parts;
  if (signerUp)
    metrics.add({
      name: 'coinkeep_signer_up',
      help: '1 while the signer answers; 0 while it is down (payouts wait)',
      labels: [],
      read: () => [{ labels: {}, value: signerUp() ? 1 : 0 }],
    });

  const cached = <T>(read: () => Promise<T>): (() => Promise<T>) => {
    let at = 0;
    let last: Promise<T> | undefined;
    return () => {
      if (!last || Date.now() - at >= DB_READ_EVERY_MS) {
        at = Date.now();
        last = read().catch((err: unknown) => {
          at = 0;
          throw err;
        });
      }
      return last;
    };
  };
  const grouped = (sql: string) => cached(() => store.read.query(sql) as Promise<Array<Record<string, string | number | null>>>);

  const invoices = grouped("SELECT coin_id, COUNT(*) AS n, SUM(CASE WHEN status = 'paid' THEN 1 ELSE 0 END) AS paid FROM invoices GROUP BY coin_id");
  metrics.add({
    name: 'coinkeep_invoices_created_total',
    help: 'Invoices created, by coin (unchosen until the payer picks one)',
    labels: ['coin', 'network'],
    type: 'counter',
    read: async () => (await invoices()).map((r) => ({ labels: coinLabels(r.coin_id as string | null), value: Number(r.n) })),
  });
  metrics.add({
    name: 'coinkeep_invoices_paid_total',
    help: 'Invoices paid, by coin',
    labels: ['coin', 'network'],
    type: 'counter',
    read: async () => (await invoices()).filter((r) => r.coin_id !== null).map((r) => ({ labels: coinLabels(r.coin_id as string), value: Number(r.paid) })),
  });

  const deliveries = grouped('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status');
  metrics.add({
    name: 'coinkeep_webhook_deliveries',
    help: 'Webhook deliveries by outcome (pending, succeeded, failed, exhausted)',
    labels: ['status'],
    read: async () => (await deliveries()).map((r) => ({ labels: { status: String(r.status) }, value: Number(r.n) })),
  });
  metrics.add({
    name: 'coinkeep_webhook_queue_depth',
    help: 'Webhook deliveries waiting to be sent',
    labels: [],
    read: async () => [{ labels: {}, value: Number((await deliveries()).find((r) => r.status === 'pending')?.n ?? 0) }],
  });

  const withdrawals = grouped('SELECT status, COUNT(*) AS n FROM withdrawals GROUP BY status');
  metrics.add({
    name: 'coinkeep_withdrawals',
    help: 'The payout queue: withdrawals by status',
    labels: ['status'],
    read: async () => (await withdrawals()).map((r) => ({ labels: { status: String(r.status) }, value: Number(r.n) })),
  });

  const alerts = cached(parts.payoutAlerts);
  metrics.add({
    name: 'coinkeep_payouts_attention',
    help: 'Payouts to look at, per chain: stuck (not mined past payouts.stuck_alert_minutes), cancelling, reopened (failed, then mined) in the last 7 days',
    labels: ['chain', 'kind'],
    read: async () => {
      const counts = new Map<string, { chain: string; kind: string; n: number }>();
      for (const a of await alerts()) {
        const key = `${a.chain_id}\u0000${a.kind}`;
        const c = counts.get(key) ?? { chain: a.chain_id, kind: a.kind, n: 0 };
        c.n++;
        counts.set(key, c);
      }
      return [...counts.values()].map((c) => ({ labels: { chain: c.chain, kind: c.kind }, value: c.n }));
    },
  });

  metrics.add({
    name: 'coinkeep_db_up',
    help: '1 when the database answers a query within 2 s',
    labels: ['dialect'],
    read: async () => [{ labels: { dialect: store.dialect }, value: (await store.ping()) ? 1 : 0 }],
  });
  metrics.add({
    name: 'coinkeep_db_connections',
    help: 'Database connections: total and idle (PostgreSQL pool), callers waiting for one, SQLite write transactions queued',
    labels: ['state'],
    read: () => {
      const h = store.poolHealth();
      const out = [{ labels: { state: 'writers_queued' }, value: h.writers }];
      for (const [state, v] of [
        ['total', h.total],
        ['idle', h.idle],
        ['waiting', h.waiting],
      ] as const)
        if (v !== null) out.push({ labels: { state }, value: v });
      return out;
    },
  });
  return metrics;
}
