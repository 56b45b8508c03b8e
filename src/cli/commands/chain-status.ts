import type { ChainStatus, FeeCeilingStatus, GasStationStatus, PayoutAlert } from '../../admin/contract';
import { payoutAlertText } from '../../dashboard/payout-alert-text';

const show = (v: number | null): string => (v === null ? '-' : String(v));

/** The chain rows of `coinkeep status`: node tip, scanned height, lag, state, and the last error. */
export function chainStatusLines(chains: readonly ChainStatus[]): string[] {
  if (chains.length === 0) return ['chains: none configured'];
  const lines = ['chains:'];
  const width = Math.max(...chains.map((c) => `${c.chain_id} (${c.kind})`.length));
  for (const c of chains) {
    const state = c.maintenance ? 'MAINTENANCE' : c.scanned_height === null ? 'not scanning' : c.scanning ? 'ok' : 'ok (scanned by another daemon)';
    lines.push(`  ${`${c.chain_id} (${c.kind})`.padEnd(width)}  tip ${show(c.node_tip)}  scanned ${show(c.scanned_height)}  lag ${show(c.lag)}  ${state}`);
    // The last error is the reason, unless the chain is in maintenance for another (a halt, a node not reached yet).
    if (c.maintenance_reason && c.maintenance_reason !== c.last_error) lines.push(`    maintenance: ${c.maintenance_reason}`);
    if (c.last_error) lines.push(`    last error${c.last_error_at ? ` at ${c.last_error_at}` : ''}: ${c.last_error}`);
  }
  return lines;
}

/** The gas stations of `coinkeep status`: balance, what the next sweeps and payouts need, and a warning when it cannot pay. */
export function gasStationLines(stations: readonly GasStationStatus[]): string[] {
  if (stations.length === 0) return [];
  const lines = ['gas stations:'];
  for (const g of stations) {
    lines.push(`  ${g.chain_id}  ${g.address}  balance ${g.balance ?? '-'}  needed ${g.needed}${g.warning ? '  LOW' : ''}`);
    if (g.warning) lines.push(`    warning: ${g.warning}`);
  }
  return lines;
}

/** The payouts of `coinkeep status` to look at: stuck, being cancelled, reopened lately (PRODUCT §14). */
export function payoutAlertLines(alerts: readonly PayoutAlert[]): string[] {
  if (alerts.length === 0) return [];
  return ['payouts to look at:', ...alerts.map((a) => `  ${a.chain_id}  ${payoutAlertText(a)}`)];
}

/** The chains whose node asks a fee above their ceiling (`chains[].payouts.max_fee`): what it asks, the ceiling, what waits. */
export function feeCeilingLines(waits: readonly FeeCeilingStatus[]): string[] {
  if (waits.length === 0) return [];
  return [
    'fees above their ceiling:',
    ...waits.map((w) => `  ${w.chain_id}  the node asks ${w.quote}, payouts.max_fee is ${w.ceiling}: ${w.waiting.join(', ')} wait (since ${w.since})`),
  ];
}
