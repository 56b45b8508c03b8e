import type { ReactNode } from 'react';
import type { DashboardSnapshot } from '../admin/contract';
import { tint, useLook } from './look';
import { payoutAlertText } from './payout-alert-text';

/** Fits text into a column: cut with … when longer, padded when shorter. */
export const col = (text: string | number | null | undefined, width: number): string => {
  const s = text === null || text === undefined ? '-' : String(text);
  return s.length > width ? `${s.slice(0, Math.max(0, width - 1))}…` : s.padEnd(width);
};

/** The end of an id: ids are UUIDv7, whose first characters are the time and alike for rows made together. */
export const short = (id: string): string => id.slice(-8);

export const since = (iso: string, now: string): string => {
  const s = Math.max(0, Math.floor((Date.parse(now) - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
};

export const uptime = (seconds: number): string => {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${String(m).padStart(2, '0')}m` : `${m}m`;
};

export interface ScreenProps {
  snap: DashboardSnapshot;
  /** The row the cursor is on, in the screen's list of actionable rows. */
  selected: number;
  /** Lines the screen may use. */
  height: number;
  width: number;
  accountName(id: string): string;
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const look = useLook();
  const { Box, Text } = look.ink;
  // flexShrink 0: a screen taller than the terminal is cut at the bottom, never squeezed into overlapping lines.
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text bold color={tint(look, 'cyan')}>
        {title}
      </Text>
      {children}
    </Box>
  );
}

function Row({ text, selected = false, color }: { text: string; selected?: boolean; color?: string }) {
  const look = useLook();
  const { Text } = look.ink;
  return (
    <Text inverse={selected} color={color ? tint(look, color) : undefined} wrap="truncate">
      {selected ? '›' : ' '}
      {text}
    </Text>
  );
}

/** The rows of a list around the cursor, so the selected one is always on screen. */
function windowed<T>(items: T[], selected: number, height: number): Array<{ item: T; index: number }> {
  const h = Math.max(1, height);
  const first = Math.max(0, Math.min(selected - Math.floor(h / 2), items.length - h));
  return items.slice(first, first + h).map((item, i) => ({ item, index: first + i }));
}

const counts = (m: Record<string, number>): string =>
  Object.entries(m)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join('  ') || 'none';

export function OverviewScreen({ snap, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  const o = snap.overview;
  if (!o) return <Text>loading…</Text>;
  const q = o.webhook_queue;
  // Every other section takes 10 lines; chains share the rest with balances, those in trouble first.
  const chainRows = Math.max(3, height - 12);
  const trouble = (c: (typeof o.chains)[number]) => (c.maintenance ? 2 : c.lag !== null && c.lag > 2 ? 1 : 0);
  const chains = o.chains.length > chainRows ? [...o.chains].sort((a, b) => trouble(b) - trouble(a)).slice(0, chainRows - 1) : o.chains;
  const hidden = o.chains.length - chains.length;
  const balanceRows = Math.max(1, height - chains.length - (hidden ? 1 : 0) - 10);
  return (
    <Box flexDirection="column">
      <Section title="Chains">
        {o.chains.length === 0 ? <Row text="no chains configured" /> : null}
        {chains.map((c) => (
          <Row
            key={c.chain_id}
            color={c.maintenance ? 'red' : c.lag !== null && c.lag > 2 ? 'yellow' : undefined}
            text={`${col(c.chain_id, 16)} tip ${col(c.node_tip, 9)} scanned ${col(c.scanned_height, 9)} lag ${col(c.lag, 5)} ${
              c.maintenance
                ? `MAINTENANCE: ${c.maintenance_reason ?? c.last_error ?? 'node unreachable or stalled'}`
                : c.scanned_height === null
                  ? 'not scanning'
                  : c.scanning
                    ? 'ok'
                    : 'ok (another daemon scans)'
            }`}
          />
        ))}
        {hidden ? <Row text={`… ${hidden} more chains (a taller terminal shows them)`} /> : null}
        {o.fee_balances.length === 0 ? <Row text="fee balances: no chain pays gas from a gas station" color="gray" /> : null}
        {o.fee_balances.map((g) => (
          <Row
            key={`gas:${g.chain_id}`}
            color={g.warning ? 'red' : undefined}
            text={`${col(g.chain_id, 16)} gas station ${g.balance ?? 'not read yet'} (next sweeps and payouts need ${g.needed})${g.warning ? ': SHORT, fund it' : ''}`}
          />
        ))}
      </Section>
      <Section title="Invoices, last hour">
        <Row text={counts(o.invoices_last_hour)} />
      </Section>
      <Section title="Queues">
        <Row
          color={q.exhausted > 0 ? 'red' : q.failing > 0 ? 'yellow' : undefined}
          text={`webhooks: pending ${q.pending}  failing ${q.failing}  exhausted ${q.exhausted}`}
        />
        <Row text={`payouts: ${counts(o.payout_queue)}`} />
        {o.signer && !o.signer.up ? (
          <Row color="red" text={`signer DOWN (${o.signer.mode}): payouts wait${o.signer.last_error ? `: ${o.signer.last_error}` : ''}`} />
        ) : null}
        {o.payout_alerts.map((a) => (
          <Row key={`alert:${a.payout_id}`} color={a.kind === 'reopened' ? 'red' : 'yellow'} text={`${col(a.chain_id, 16)} ${payoutAlertText(a)}`} />
        ))}
      </Section>
      <Section title="Balances (hot: available / hold; cold: forwarded)">
        {o.balances.length === 0 ? <Row text="no money held" /> : null}
        {o.balances.slice(0, balanceRows).map((b) => (
          <Row
            key={`${b.account_id}:${b.coin_id}`}
            text={`${col(accountName(b.account_id), 20)} ${col(b.ticker ?? b.coin_id, 8)} ${col(b.available, 22)} / ${b.cold === null ? b.hold : `${col(b.hold, 22)} cold ${b.cold}`}`}
          />
        ))}
        {o.balances.length > balanceRows ? <Row text={`… ${o.balances.length - balanceRows} more (narrow with a: account)`} /> : null}
      </Section>
    </Box>
  );
}

export function PaymentsScreen({ snap, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  const p = snap.payments;
  if (!p) return <Text>loading…</Text>;
  const rows = Math.max(1, Math.floor((height - 4) / 2));
  return (
    <Box flexDirection="column">
      <Section title="Payments (newest first): status, amount, coin, confirmations">
        {p.payments.length === 0 ? <Row text="no payments yet" /> : null}
        {p.payments.slice(0, rows).map((t) => (
          <Row
            key={t.id}
            color={t.status === 'confirmed' ? 'green' : t.status === 'reverted' ? 'red' : 'yellow'}
            text={`${short(t.id)} ${col(t.status, 9)} ${col(t.amount, 16)} ${col(t.ticker, 6)} conf ${col(t.confirmations, 4)} ${col(t.type === 'deposit' ? 'deposit' : `invoice ${short(t.invoice_id ?? '')}`, 16)} ${col(accountName(t.account_id), 14)} ${since(t.created_at, snap.at)}`}
          />
        ))}
      </Section>
      <Section title="Invoices (newest first)">
        {p.invoices.length === 0 ? <Row text="no invoices yet" /> : null}
        {p.invoices.slice(0, rows).map((i) => (
          <Row
            key={i.id}
            text={`${short(i.id)} ${col(i.status, 10)} ${col(`${i.amount} ${i.currency}`, 16)} ${col(i.amount_crypto ? `${i.amount_crypto} ${i.ticker ?? ''}` : i.ticker, 18)} paid ${col(i.paid_amount, 12)} ${col(accountName(i.account_id), 14)} ${since(i.created_at, snap.at)}`}
          />
        ))}
      </Section>
    </Box>
  );
}

/** The Approvals screen's rows: withdraw-permission requests, then withdrawals waiting for a decision. */
export function approvalRows(snap: DashboardSnapshot) {
  const a = snap.approvals;
  if (!a) return [];
  return [
    ...a.withdraw_requests.map((r) => ({ kind: 'request' as const, account_id: r.account_id, id: r.key_id, request: r })),
    ...a.withdrawals.map((w) => ({ kind: 'withdrawal' as const, account_id: w.account_id, id: w.id, withdrawal: w })),
  ];
}

export function ApprovalsScreen({ snap, selected, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  const rows = approvalRows(snap);
  if (!snap.approvals) return <Text>loading…</Text>;
  return (
    <Box flexDirection="column">
      <Section title="Waiting for an owner or admin (y approve · n reject · c cancel)">
        {rows.length === 0 ? <Row text="nothing to decide" /> : null}
        {windowed(rows, selected, height - 1).map(({ item, index }) =>
          item.kind === 'request' ? (
            <Row
              key={`r:${item.id}`}
              selected={index === selected}
              text={`withdraw permission  key ${item.request.key_id} "${item.request.key_name}"  by ${item.request.requested_by ?? '-'}  ${col(accountName(item.account_id), 14)}`}
            />
          ) : (
            <Row
              key={`w:${item.id}`}
              selected={index === selected}
              text={`withdrawal ${item.withdrawal.id}  ${col(item.withdrawal.status, 17)} ${item.withdrawal.amount} ${item.withdrawal.ticker ?? ''} -> ${item.withdrawal.to_address}${item.withdrawal.review_reason ? ` (${item.withdrawal.review_reason})` : ''}  ${accountName(item.account_id)}`}
            />
          ),
        )}
      </Section>
    </Box>
  );
}

/** The Webhooks screen's rows: failing and exhausted deliveries, then the endpoints. */
export function webhookRows(snap: DashboardSnapshot) {
  const w = snap.webhooks;
  if (!w) return [];
  return [
    ...w.deliveries.map((d) => ({ kind: 'delivery' as const, account_id: d.account_id, id: d.id, endpoint_id: d.endpoint_id, delivery: d })),
    ...w.endpoints.map((e) => ({ kind: 'endpoint' as const, account_id: e.account_id, id: e.id, endpoint_id: e.id as string | null, endpoint: e })),
  ];
}

export function WebhooksScreen({ snap, selected, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  if (!snap.webhooks) return <Text>loading…</Text>;
  const rows = webhookRows(snap);
  const lines = windowed(rows, selected, height - 2);
  const deliveries = lines.filter((l) => l.item.kind === 'delivery');
  const endpoints = lines.filter((l) => l.item.kind === 'endpoint');
  return (
    <Box flexDirection="column">
      <Section title="Failing and exhausted deliveries (r replay · R replay every exhausted of its endpoint · p ping)">
        {snap.webhooks.deliveries.length === 0 ? <Row text="none: every delivery succeeded or is on schedule" /> : null}
        {deliveries.map(({ item, index }) =>
          item.kind === 'delivery' ? (
            <Row
              key={item.id}
              selected={index === selected}
              color={item.delivery.status === 'exhausted' ? 'red' : 'yellow'}
              text={`${short(item.id)} ${col(item.delivery.status, 9)} ${col(item.delivery.event_type, 20)} tries ${col(item.delivery.attempts, 3)} ${col(item.delivery.last_error ?? (item.delivery.last_response_status ? `HTTP ${item.delivery.last_response_status}` : null), 34)} ${accountName(item.account_id)}`}
            />
          ) : null,
        )}
      </Section>
      <Section title="Endpoints">
        {snap.webhooks.endpoints.length === 0 ? <Row text="no endpoints" /> : null}
        {endpoints.map(({ item, index }) =>
          item.kind === 'endpoint' ? (
            <Row
              key={item.id}
              selected={index === selected}
              text={`${short(item.id)} ${item.endpoint.enabled ? 'enabled ' : 'disabled'} ${col(item.endpoint.url, 46)} ${accountName(item.account_id)}`}
            />
          ) : null,
        )}
      </Section>
    </Box>
  );
}

export function KeysScreen({ snap, selected, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  if (!snap.keys) return <Text>loading…</Text>;
  const items = snap.keys.items;
  return (
    <Box flexDirection="column">
      <Section title="API keys (r rotate · d disable)">
        {items.length === 0 ? <Row text="no keys" /> : null}
        {windowed(items, selected, height - 1).map(({ item: k, index }) => (
          <Row
            key={k.key_id}
            selected={index === selected}
            color={k.status === 'active' ? undefined : 'gray'}
            text={`${col(k.key_id, 32)} ${col(k.status, 8)} ${col(k.name, 12)} ${col(k.permissions.join(','), 28)} used ${col(k.last_used_at ? k.last_used_at.slice(0, 16).replace('T', ' ') : 'never', 16)} ${k.rotation_required ? 'ROTATE ' : ''}${accountName(k.account_id)}`}
          />
        ))}
      </Section>
    </Box>
  );
}

/** The Refunds screen's rows: invoices waiting for a decision, then refunds in flight or waiting for the payer's address. */
export function refundRows(snap: DashboardSnapshot) {
  const r = snap.refunds;
  if (!r) return [];
  return [
    ...r.decisions.map((d) => ({ kind: 'decision' as const, account_id: d.account_id, id: d.invoice_id, decision: d })),
    ...r.open.map((f) => ({ kind: 'refund' as const, account_id: f.account_id, id: f.id, refund: f })),
  ];
}

const DECISION_TEXT = { overpaid: 'overpaid', underpaid: 'underpaid, final', late: 'paid late' } as const;

export function RefundsScreen({ snap, selected, height, accountName }: ScreenProps) {
  const look = useLook();
  const { Box, Text } = look.ink;
  if (!snap.refunds) return <Text>loading…</Text>;
  const rows = refundRows(snap);
  const lines = windowed(rows, selected, height - 2);
  return (
    <Box flexDirection="column">
      <Section title="Invoices that need a decision: refund, keep, or accept an underpayment">
        {snap.refunds.decisions.length === 0 ? <Row text="none: no invoice is overpaid, underpaid for good or paid late" /> : null}
        {lines.map(({ item, index }) =>
          item.kind === 'decision' ? (
            <Row
              key={`d:${item.id}`}
              selected={index === selected}
              color="yellow"
              text={`invoice ${item.id}  ${col(DECISION_TEXT[item.decision.kind], 16)} refundable ${col(`${item.decision.refundable} ${item.decision.ticker ?? ''}`, 16)} paid ${col(item.decision.paid_amount, 14)} ${col(accountName(item.account_id), 14)} ${since(item.decision.created_at, snap.at)}`}
            />
          ) : null,
        )}
      </Section>
      <Section title="Refunds in flight or waiting for the payer's address (c cancel)">
        {snap.refunds.open.length === 0 ? <Row text="none" /> : null}
        {lines.map(({ item, index }) =>
          item.kind === 'refund' ? (
            <Row
              key={`r:${item.id}`}
              selected={index === selected}
              text={`refund ${item.id}  ${col(item.refund.status, 17)} ${item.refund.amount} ${item.refund.ticker ?? ''} -> ${item.refund.to_address ?? 'payer link'}  ${item.refund.invoice_id ? `invoice ${short(item.refund.invoice_id)}` : `tx ${short(item.refund.transaction_id ?? '')}`}  ${accountName(item.account_id)}`}
            />
          ) : null,
        )}
      </Section>
    </Box>
  );
}

export function LogScreen({ snap, height, width }: ScreenProps & { level: string }) {
  const look = useLook();
  const { Box, Text } = look.ink;
  if (!snap.log) return <Text>loading…</Text>;
  const lines = snap.log.lines.slice(-Math.max(1, height));
  return (
    <Box flexDirection="column">
      {lines.length === 0 ? <Row text="no log lines at this level yet" /> : null}
      {lines.map((l, i) => (
        <Row
          key={`${l.time}:${i}`}
          color={l.level === 'error' ? 'red' : l.level === 'warn' ? 'yellow' : l.level === 'debug' ? 'gray' : undefined}
          text={`${l.time.slice(11, 19)} ${col(l.level, 5)} ${l.msg}${Object.keys(l.fields).length ? ` ${JSON.stringify(l.fields)}` : ''}`.slice(0, width * 2)}
        />
      ))}
    </Box>
  );
}

export const HELP_LINES = [
  '1-7 or ←/→   switch screen: Overview, Payments, Approvals, Webhooks, Keys, Log, Refunds',
  'a            cycle the account in view (all accounts, then each one)',
  '↑/↓ or k/j   move the cursor on a list',
  'Approvals    y approve · n reject · c cancel a withdrawal (asks the two-factor code; needs --as EMAIL)',
  'Webhooks     r replay the delivery · R replay every exhausted one of its endpoint · p ping the endpoint',
  'Keys         r rotate · d disable (asks to confirm; needs --as EMAIL)',
  'Log          l change the level filter',
  'Refunds      c cancel the refund (asks to confirm and the two-factor code; needs --as EMAIL)',
  '?            this help · Esc closes it',
  'q or Ctrl-C  quit',
];

export function HelpScreen() {
  const look = useLook();
  const { Box } = look.ink;
  return (
    <Box flexDirection="column">
      <Section title="Keys">
        {HELP_LINES.map((l) => (
          <Row key={l} text={l} />
        ))}
      </Section>
    </Box>
  );
}
