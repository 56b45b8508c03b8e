import type { ChainConfig } from '../config/schema';
import type { Clock } from '../shared/clock';
import { spoken } from './node-pool';
import { NodeFault, type BlockRef, type ChainReader } from './types';

/** One thing `coinkeep doctor` found about an endpoint; `blocking`: the endpoint cannot serve the chain so. */
export interface DoctorNote {
  found: string;
  blocking?: boolean;
  /** What to change, when something should. */
  change?: string;
}

/** One endpoint as the doctor saw it. */
export interface EndpointReport {
  /** `endpoint 1 (host:port)`: never the URL's path, user or password, which may carry a key. */
  name: string;
  /** It answered, on the configured network, not behind, with nothing blocking. */
  usable: boolean;
  latency_ms: number | null;
  tip: number | null;
  /** Seconds since its newest block, when the node gives the block's time. */
  newest_block_age_seconds: number | null;
  notes: DoctorNote[];
}

/** One chain: its endpoints, and whether it can work (at least `quorum` usable endpoints). */
export interface ChainReport {
  chain_id: string;
  kind: ChainConfig['kind'];
  works: boolean;
  quorum: number;
  endpoints: EndpointReport[];
}

/** What a family checks of one endpoint beyond its tip: sync, indexes, pruning, limits (PRODUCT §15). */
export type FamilyProbe = (tip: BlockRef, signal: AbortSignal) => Promise<DoctorNote[]>;

/** An endpoint to check: its reader alone and its family's probe. */
export interface DoctorEndpoint {
  url: string;
  reader: ChainReader;
  probe: FamilyProbe;
  /** The family's reading of an error of the tip (a Tron lite node's closed history); null: the plain one. */
  explain?: (err: unknown) => DoctorNote | null;
}

/**
 * Checks each endpoint of a chain: its tip (the network it is on, its latency), how old its
 * newest block is against `stale_after_seconds`, then the family's own checks. Never throws for a
 * node's trouble: it is a finding.
 */
export async function checkChain(chain: ChainConfig, endpoints: readonly DoctorEndpoint[], clock: Clock, signal: AbortSignal): Promise<ChainReport> {
  const reports: EndpointReport[] = [];
  for (const [i, e] of endpoints.entries()) reports.push(await checkEndpoint(chain, `endpoint ${i + 1} (${hostOf(e.url)})`, e, clock, signal));
  const usable = reports.filter((r) => r.usable).length;
  return { chain_id: chain.id, kind: chain.kind, works: usable >= chain.nodes.quorum, quorum: chain.nodes.quorum, endpoints: reports };
}

async function checkEndpoint(chain: ChainConfig, name: string, e: DoctorEndpoint, clock: Clock, signal: AbortSignal): Promise<EndpointReport> {
  const report: EndpointReport = { name, usable: false, latency_ms: null, tip: null, newest_block_age_seconds: null, notes: [] };
  const started = performance.now();
  let tip: BlockRef;
  try {
    tip = await e.reader.tip(signal);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const explained = e.explain?.(err);
    if (explained) report.notes.push(explained);
    else if (err instanceof NodeFault)
      report.notes.push({
        found: `wrong network: ${message}`,
        blocking: true,
        change: `point it at a node of ${networkOf(chain)}, or correct the chain's settings`,
      });
    else
      report.notes.push({
        found: `no answer: ${message}`,
        blocking: true,
        change: "check the URL, the node's RPC settings (bind address, allowed hosts, credentials) and that it runs",
      });
    return report;
  }
  report.latency_ms = Math.round(performance.now() - started);
  report.tip = tip.height;
  report.notes.push({ found: `${networkOf(chain)}, tip ${tip.height}, answered in ${report.latency_ms} ms` });
  const limit = chain.nodes.stale_after_seconds;
  if (tip.time !== undefined) {
    const age = Math.max(0, clock.now().getTime() / 1000 - tip.time);
    report.newest_block_age_seconds = Math.round(age);
    if (limit !== null && age > limit)
      report.notes.push({
        found: `node behind: newest block ${spoken(age)} old (stale_after_seconds ${limit})`,
        blocking: true,
        change: 'let the node catch up with its peers, or use another endpoint',
      });
    else report.notes.push({ found: `newest block ${spoken(age)} old${limit === null ? ' (staleness not watched: a chain mined on demand)' : ''}` });
  } else if (limit !== null) report.notes.push({ found: "the node does not give its newest block's time: staleness cannot be watched" });
  try {
    report.notes.push(...(await e.probe(tip, signal)));
  } catch (err) {
    report.notes.push({
      found: `checks stopped: ${err instanceof Error ? err.message : String(err)}`,
      blocking: true,
      change: 'see that the node answers every request the chain needs',
    });
  }
  report.usable = !report.notes.some((n) => n.blocking);
  return report;
}

/** The report as lines: per chain its verdict, per endpoint what was found, and what to change. */
export function doctorLines(reports: readonly ChainReport[]): string[] {
  if (reports.length === 0) return ['no chains configured'];
  const lines: string[] = [];
  for (const c of reports) {
    const usable = c.endpoints.filter((e) => e.usable).length;
    const verdict = c.works ? 'ok' : `CANNOT WORK: ${usable} usable endpoint(s) of ${c.endpoints.length}${c.quorum > 1 ? `, quorum ${c.quorum}` : ''}`;
    lines.push(`${c.chain_id} (${c.kind}): ${verdict}`);
    for (const e of c.endpoints) {
      lines.push(`  ${e.name}: ${e.usable ? 'usable' : 'NOT USABLE'}`);
      for (const n of e.notes) {
        lines.push(`    ${n.blocking ? 'problem: ' : ''}${n.found}`);
        if (n.change) lines.push(`      change: ${n.change}`);
      }
    }
  }
  return lines;
}

function networkOf(chain: ChainConfig): string {
  if (chain.kind === 'btc') return `network ${chain.network}`;
  if (chain.kind === 'evm') return `chain id ${chain.chain_id}`;
  return chain.options.genesis_block_id ? 'its own genesis block' : `network ${chain.network ?? 'mainnet'}`;
}

/** The URL's host and port only. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'bad URL';
  }
}
