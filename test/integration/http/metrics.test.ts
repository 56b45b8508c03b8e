/**
 * Operators' views: GET /metrics (Prometheus text) on its own listener, off by default, and
 * GET /readyz, 200 only once the store answers and every chain is past its first contact.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../helpers/vectors';
import { call, SignedClient } from '../../helpers/api-client';
import { until } from '../../helpers/cli';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { IdleChain } from '../../helpers/idle-chain';
import { TEST_CHAINS } from '../../helpers/invoice-fixture';
import type { BlockRef } from '../../../src/chains/types';

const FAST = TEST_CHAINS.map((c) => ({ ...c, options: { ...c.options, poll_interval_ms: 50, stall_seconds: 0 } }));

/** An idle node that refuses every call while `down`. */
class SwitchableChain extends IdleChain {
  static down = new Set<string>();
  override async tip(): Promise<BlockRef> {
    if (SwitchableChain.down.has(this.chainId)) throw new Error('connect ECONNREFUSED');
    return super.tip();
  }
}

const scrape = async (url: string): Promise<{ status: number; type: string | null; text: string }> => {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};
const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('metrics are off by default: no listener, and the API has no /metrics', async (t) => {
  const td = await startTestDaemon();
  t.teardown(() => td.stop());
  t.is(td.daemon.metricsUrl, null);
  t.is((await call(td.url, '/metrics')).status, 404);
});

test('GET /metrics on its own 127.0.0.1 listener: requests by route template and status with latency, chains, invoices, webhooks, payouts, database, event loop and memory', async (t) => {
  const td = await startTestDaemon({ chains: FAST, metrics: { listen: '127.0.0.1:0' } }, { adapterFor: (chain) => new IdleChain(chain.id) });
  t.teardown(() => td.stop());
  t.regex(td.daemon.metricsUrl!, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  await until(() => td.daemon.chains.status().every((s) => s.scanned_height !== null), 20_000, 'chains watched');
  const created = await api.post('/v1/invoices', { amount: '10.00', currency: 'USD' });
  t.is(created.status, 201);
  for (let i = 0; i < 3; i++) t.is((await api.get(`/v1/invoices/${created.json.id}`)).status, 200);
  t.is((await api.get('/v1/invoices/00000000-0000-4000-8000-000000000000')).status, 404);

  const res = await scrape(td.daemon.metricsUrl!);
  t.is(res.status, 200);
  t.regex(res.type!, /^text\/plain; version=0\.0\.4/);
  const m1 = res.text;
  // Labelled by the route's template, never by the URL (no id in any label).
  t.is(value(m1, 'coinkeep_http_request_duration_seconds_count{method="GET",route="/v1/invoices/:id",status="200"}'), 3);
  t.is(value(m1, 'coinkeep_http_request_duration_seconds_count{method="GET",route="/v1/invoices/:id",status="404"}'), 1);
  t.is(value(m1, 'coinkeep_http_request_duration_seconds_count{method="POST",route="/v1/invoices",status="201"}'), 1);
  t.truthy(value(m1, 'coinkeep_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/invoices/:id",status="200"}'));
  t.false(m1.includes(created.json.id));
  t.is(value(m1, 'coinkeep_chain_tip_height{chain="bitcoin"}'), 0);
  t.is(value(m1, 'coinkeep_chain_scanned_height{chain="ethereum"}'), 0);
  t.is(value(m1, 'coinkeep_chain_lag_blocks{chain="ethereum"}'), 0);
  t.is(value(m1, 'coinkeep_chain_maintenance{chain="bitcoin"}'), 0);
  t.is(value(m1, 'coinkeep_invoices_created_total{coin="unchosen",network=""}'), 1);
  t.regex(m1, /^# TYPE coinkeep_invoices_paid_total counter$/m);
  t.is(value(m1, 'coinkeep_webhook_queue_depth'), 0);
  t.regex(m1, /^# TYPE coinkeep_webhook_deliveries gauge$/m);
  t.regex(m1, /^# TYPE coinkeep_withdrawals gauge$/m);
  t.is(value(m1, 'coinkeep_db_up{dialect="sqlite"}'), 1);
  t.is(value(m1, 'coinkeep_db_connections{state="writers_queued"}'), 0);
  t.true(value(m1, 'coinkeep_nodejs_eventloop_lag_seconds')! >= 0);
  t.true(value(m1, 'coinkeep_process_resident_memory_bytes')! > 0);
  t.is((await scrape(td.daemon.metricsUrl!.replace('/metrics', '/other'))).status, 404);

  // The sample Grafana dashboard queries only metrics the daemon exposes.
  const dashboard = readFileSync(path.join(projectRoot(), 'docs', 'grafana-dashboard.json'), 'utf8');
  const names = new Set(dashboard.match(/coinkeep_[a-z0-9_]+/g));
  t.true(names.size >= 12);
  for (const name of names) t.regex(m1, new RegExp(`^(# TYPE ${name.replace(/_(bucket|count|sum)$/, '')} |${name}[{ ])`, 'm'), `${name} is not exposed`);
});

test('GET /readyz is 503 naming the chain while its node never answered, 200 once every chain had its first contact; /healthz answers throughout', async (t) => {
  SwitchableChain.down.add('ethereum');
  t.teardown(() => SwitchableChain.down.delete('ethereum'));
  const td = await startTestDaemon({ chains: FAST }, { adapterFor: (chain) => new SwitchableChain(chain.id) });
  t.teardown(() => td.stop());
  const waiting = await call(td.url, '/readyz');
  t.is(waiting.status, 503);
  t.deepEqual(waiting.json, { status: 'not_ready', store: 'ok', chains_waiting: ['ethereum'] });
  t.is((await call(td.url, '/healthz')).status, 200);

  SwitchableChain.down.delete('ethereum');
  const ready = await until(
    async () => {
      const res = await call(td.url, '/readyz');
      return res.status === 200 ? res : undefined;
    },
    20_000,
    '/readyz to answer 200',
  );
  t.deepEqual(ready.json, { status: 'ready', store: 'ok', chains_waiting: [] });
});

test('GET /readyz is 503 when the store does not answer', async (t) => {
  const td = await startTestDaemon({ chains: FAST }, { adapterFor: (chain) => new IdleChain(chain.id) });
  t.teardown(() => td.stop());
  await until(async () => ((await call(td.url, '/readyz')).status === 200 ? true : undefined), 20_000, 'ready');
  const store = td.daemon.store;
  const realPing = store.ping.bind(store);
  store.ping = async () => false;
  t.teardown(() => void (store.ping = realPing));
  const res = await call(td.url, '/readyz');
  t.is(res.status, 503);
  t.like(res.json, { status: 'not_ready', store: 'unreachable' });
});
