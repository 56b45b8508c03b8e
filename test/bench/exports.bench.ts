import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { csvField } from '../../src/http/export';
import { TRANSACTION_COLUMNS } from '../../src/transactions/transaction.routes';
import { merchantWithKey, startTestDaemon } from '../helpers/daemon';
import { seedTransactions } from '../helpers/money-fixtures';
import { signRequest } from '../helpers/signer';
import { CHAINS, ETH } from '../integration/transactions/fixtures';
import { fmt, report, rssMiB } from './lib';

/**
 * Exports (issue 4 §7): CSV of 100k and 1M transactions through the signed API against a bare
 * script that writes the same rows from the same database to CSV (better-sqlite3, one SELECT
 * iterated, the same quoting); the files must be identical. Peak RSS growth of this process (the
 * daemon runs in it) while each export streams; XLSX rows per second at 100k rows (its limit).
 */

interface RawDb {
  prepare(sql: string): { iterate(...params: unknown[]): IterableIterator<Record<string, unknown>> };
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (file: string, opts?: { readonly?: boolean }) => RawDb;

const SQL = `SELECT t.id, t.type, t.status, t.coin_id, t.amount, t.fee, t.net_amount, t.txid, ct.confirmations,
  t.invoice_id, t.address_id, t.withdrawal_id, t.created_at, t.confirmed_at
  FROM transactions t LEFT JOIN chain_transfers ct ON ct.id = t.chain_transfer_id
  WHERE t.account_id = ? ORDER BY t.created_at DESC, t.id DESC`;

/** The bare script: one query, rows straight to a CSV file. */
async function bareCsv(dbFile: string, accountId: string, out: string): Promise<number> {
  const db = new Database(dbFile, { readonly: true });
  const file = createWriteStream(out);
  const headers = TRANSACTION_COLUMNS.map((c) => c.header);
  const line = (cells: string[]) => cells.map(csvField).join(',') + '\r\n';
  const started = process.hrtime.bigint();
  let chunk = line(headers);
  let rows = 0;
  for (const r of db.prepare(SQL).iterate(accountId)) {
    const v = { ...r, ticker: 'ETH', network: 'ethereum' } as Record<string, unknown>;
    chunk += line(headers.map((h) => (v[h] === null || v[h] === undefined ? '' : String(v[h]))));
    if (++rows % 2000 === 0) {
      if (!file.write(chunk)) await new Promise<void>((res) => file.once('drain', () => res()));
      chunk = '';
    }
  }
  file.end(chunk);
  await new Promise<void>((res) => file.once('finish', () => res()));
  db.close();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** A signed export request, the body streamed to a file; the RSS peak sampled meanwhile. */
async function apiExport(baseUrl: string, key: { keyId: string; secret: string }, query: string, out: string) {
  const target = `/v1/transactions?${query}`;
  const before = rssMiB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
  const started = process.hrtime.bigint();
  const contentType = await new Promise<string>((resolve, reject) => {
    http
      .get(baseUrl + target, { headers: signRequest({ ...key, method: 'GET', target }) }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`export answered ${res.statusCode}`));
        pipeline(res, createWriteStream(out)).then(() => resolve(String(res.headers['content-type'])), reject);
      })
      .on('error', reject);
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB());
  return { seconds, growthMiB: peak - before, peakMiB: peak, contentType };
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

export async function run(): Promise<void> {
  const td = await startTestDaemon(CHAINS);
  const tmp = td.dataDir;
  try {
    const m = await merchantWithKey(td.daemon, { rateLimit: 100000 });
    const key = { keyId: m.keyId, secret: m.secret };
    const dbFile = td.daemon.config.database.url.slice('sqlite:'.length);
    const apiFile = path.join(tmp, 'api.csv');
    const bareFile = path.join(tmp, 'bare.csv');
    let seeded = 0;
    for (const total of [100_000, 1_000_000]) {
      const t0 = Date.now();
      // Later rows are newer: the export (newest first) is one list across both seedings.
      await seedTransactions(td.daemon.store, m.accountId, total - seeded, { coinId: ETH, start: Date.parse('2025-01-01T00:00:00Z') + seeded });
      const seedSeconds = (Date.now() - t0) / 1000;
      seeded = total;
      const bareSeconds = await bareCsv(dbFile, m.accountId, bareFile);
      const api = await apiExport(td.url, key, 'format=csv', apiFile);
      const same = (await sha256(apiFile)) === (await sha256(bareFile));
      const ratio = bareSeconds / api.seconds;
      report(
        `CSV export of ${total.toLocaleString('en')} transactions`,
        [
          ['seeded (one transaction)', `${fmt(seedSeconds)} s`],
          ['bare script (better-sqlite3 → CSV file)', `${fmt(bareSeconds, 2)} s, ${fmt(total / bareSeconds, 0)} rows/s`],
          ['API (signed GET ?format=csv → file)', `${fmt(api.seconds, 2)} s, ${fmt(total / api.seconds, 0)} rows/s`],
          ['files identical', `${same} (${fmt(statSync(apiFile).size / 1024 / 1024)} MiB)`],
          [
            'process RSS growth while streaming',
            `${fmt(api.growthMiB)} MiB (peak ${fmt(api.peakMiB)} MiB; goal < 50 MiB: ${api.growthMiB < 50 ? 'met' : 'NOT met'})`,
          ],
        ],
        { name: 'throughput ratio API / bare script', value: ratio, goal: '>= 0.5', ok: ratio >= 0.5 },
      );
      if (total === 100_000) {
        const xlsx = await apiExport(td.url, key, 'format=xlsx', path.join(tmp, 'api.xlsx'));
        report('XLSX export of 100,000 transactions (its row limit)', [
          ['content type', xlsx.contentType],
          ['time', `${fmt(xlsx.seconds, 2)} s`],
          ['rows per second', fmt(total / xlsx.seconds, 0)],
          ['CSV rows per second, same rows (for scale)', fmt(total / api.seconds, 0)],
          ['process RSS growth while streaming', `${fmt(xlsx.growthMiB)} MiB`],
        ]);
      }
    }
  } finally {
    await td.stop();
  }
}
