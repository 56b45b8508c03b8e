import { useEffect, useRef, useState } from 'react';
import type { Key } from 'ink';
import { DASHBOARD_SCREENS, type DashboardScreen, type DashboardSnapshot } from '../admin/contract';
import { accountPath, exhaustedOfEndpoint, type DashboardApi, type LogLevelFilter } from './client';
import { tint, useKeys, useLook } from './look';
import { confirmAnswer, ConfirmLine, MaskedLine, maskedStep } from './prompts';
import {
  approvalRows,
  ApprovalsScreen,
  HelpScreen,
  KeysScreen,
  LogScreen,
  OverviewScreen,
  PaymentsScreen,
  refundRows,
  RefundsScreen,
  short,
  uptime,
  WebhooksScreen,
  webhookRows,
  type ScreenProps,
} from './screens';

export interface DashboardProps {
  api: DashboardApi;
  /** --account: the one account in view (else every account, the operator's view). */
  account?: string;
  /** --as: the member who acts (approve, reject, cancel, rotate, disable). */
  as?: string;
  /** How often the snapshot is read (at most once a second in use; tests may go faster). */
  refreshMs?: number;
}

const TITLES: Record<DashboardScreen, string> = {
  overview: 'Overview',
  payments: 'Payments',
  approvals: 'Approvals',
  webhooks: 'Webhooks',
  keys: 'Keys',
  log: 'Log',
  refunds: 'Refunds',
};
const LEVELS: LogLevelFilter[] = ['debug', 'info', 'warn', 'error'];
const DOING = { approve: 'approving', reject: 'rejecting', cancel: 'cancelling' } as const;

/** The line the CLI would print for this failure (its message after `coinkeep: `). */
const failureLine = (err: unknown): string => `coinkeep: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;

/**
 * What changes the picture: the snapshot without its clock, uptime to the minute. A poll that
 * brings nothing new renders nothing (no redraw per tick).
 */
const pictureOf = (s: DashboardSnapshot): string =>
  JSON.stringify({
    ...s,
    at: s.at.slice(0, 16),
    daemon: { ...s.daemon, uptime_seconds: Math.floor(s.daemon.uptime_seconds / 60) },
    // A chain's last poll moves every few seconds and is not on screen.
    overview: s.overview && { ...s.overview, chains: s.overview.chains.map(({ last_poll_at: _at, ...c }) => c) },
  });

type Prompt = { kind: 'otp'; label: string; value: string; next: (otp: string) => void } | { kind: 'confirm'; question: string; next: () => void };
type Message = { text: string; tone: 'ok' | 'error' | 'info' };

function useTerminalSize(): { columns: number; rows: number } {
  const { useStdout } = useLook().ink;
  const { stdout } = useStdout();
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout]);
  return size;
}

export function Dashboard({ api, account: fixedAccount, as, refreshMs = 1000 }: DashboardProps) {
  const look = useLook();
  const { Box, Text, useApp } = look.ink;
  const { exit } = useApp();
  const { columns, rows } = useTerminalSize();
  const [screen, setScreen] = useState<DashboardScreen>('overview');
  const [help, setHelp] = useState(false);
  const [accountAt, setAccountAt] = useState(-1);
  const [level, setLevel] = useState<LogLevelFilter>('info');
  const [snap, setSnap] = useState<DashboardSnapshot | null>(null);
  const [conn, setConn] = useState<{ state: 'connecting' | 'up' | 'down'; error: string | null }>({ state: 'connecting', error: null });
  const [selected, setSelectedState] = useState(0);
  // The cursor as the keys moved it, ahead of the frame: keys may come faster than frames (a held
  // arrow key, a busy machine), and each must move on from where the last one left it.
  const selectedNow = useRef(0);
  const setSelected = (at: number) => {
    selectedNow.current = at;
    setSelectedState(at);
  };
  const [prompt, showPrompt] = useState<Prompt | null>(null);
  // The prompt in a ref too: keys typed faster than renders each see the one before.
  const promptNow = useRef<Prompt | null>(null);
  const setPrompt = (p: Prompt | null) => {
    promptNow.current = p;
    showPrompt(p);
  };
  const [message, setMessage] = useState<Message | null>(null);
  const [nonce, setNonce] = useState(0);
  const picture = useRef('');
  const accounts = snap?.accounts ?? [];
  const account = fixedAccount ?? (accountAt >= 0 ? accounts[accountAt]?.id : undefined);

  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async () => {
      const started = Date.now();
      try {
        const s = await api.snapshot(screen, account, level);
        if (stopped) return;
        const p = pictureOf(s);
        if (p !== picture.current) {
          picture.current = p;
          setSnap(s);
        }
        setConn((c) => {
          if (c.state === 'up') return c;
          if (c.state === 'down') setMessage({ text: 'reconnected to coinkeepd', tone: 'ok' });
          return { state: 'up', error: null };
        });
      } catch (err) {
        if (stopped) return;
        const line = err instanceof Error ? err.message.split('\n')[0]! : String(err);
        setConn((c) => (c.state === 'down' && c.error === line ? c : { state: 'down', error: line }));
      }
      if (!stopped) timer = setTimeout(() => void tick(), Math.max(50, refreshMs - (Date.now() - started)));
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, screen, account, level, nonce, refreshMs]);

  const ready = snap !== null && snap[screen] !== undefined;
  const list: Array<{ account_id: string; id: string }> = !ready
    ? []
    : screen === 'approvals'
      ? approvalRows(snap)
      : screen === 'webhooks'
        ? webhookRows(snap)
        : screen === 'keys'
          ? snap.keys!.items.map((k) => ({ account_id: k.account_id, id: k.key_id }))
          : screen === 'refunds'
            ? refundRows(snap)
            : [];
  const cursor = Math.max(0, Math.min(selected, list.length - 1));
  /** The row the keys are on now (an action acts on it, even before the frame shows it). */
  const cursorNow = () => Math.max(0, Math.min(selectedNow.current, list.length - 1));

  const run = (label: string, work: () => Promise<string>) => {
    setMessage({ text: `${label}…`, tone: 'info' });
    work().then(
      (text) => {
        setMessage({ text, tone: 'ok' });
        setNonce((n) => n + 1);
      },
      (err: unknown) => setMessage({ text: failureLine(err), tone: 'error' }),
    );
  };
  const needMember = (): boolean => {
    if (as) return true;
    setMessage({ text: 'this action is a member’s: start the dashboard with --as EMAIL', tone: 'error' });
    return false;
  };
  const withOtp = (label: string, next: (otp: string) => void) => setPrompt({ kind: 'otp', label, value: '', next });
  const confirm = (question: string, next: () => void) => setPrompt({ kind: 'confirm', question, next });

  const decide = (decision: 'approve' | 'reject' | 'cancel') => {
    const row = approvalRows(snap!)[cursorNow()];
    if (!row) return;
    if (decision === 'cancel' && row.kind === 'request') return setMessage({ text: 'c cancels a withdrawal: move the cursor onto one', tone: 'error' });
    if (!needMember()) return;
    const what = row.kind === 'request' ? `the withdraw permission of key ${row.id}` : `withdrawal ${short(row.id)}`;
    const send = () =>
      withOtp(`Two-factor code of ${as} to ${decision} ${what}:`, (otp) =>
        run(`${DOING[decision]} ${what}`, async () => {
          if (row.kind === 'request') {
            const r = await api.post(`${accountPath(row.account_id)}/withdraw-requests/${encodeURIComponent(row.id)}/${decision}`, { as, otp });
            return `key ${r.key.key_id}: withdraw ${r.key.withdraw_status}`;
          }
          const r = await api.post(`${accountPath(row.account_id)}/withdrawals/${encodeURIComponent(row.id)}/${decision}`, { as, otp });
          return `withdrawal ${r.id}: ${r.status}`;
        }),
      );
    if (decision === 'approve') send();
    else confirm(`${decision === 'reject' ? 'Reject' : 'Cancel'} ${what}${row.kind === 'withdrawal' ? ' (its money returns to available)' : ''}?`, send);
  };

  const webhookAction = (action: 'replay' | 'replay-endpoint' | 'ping') => {
    const row = webhookRows(snap!)[cursorNow()];
    if (!row) return;
    const base = `${accountPath(row.account_id)}/webhooks`;
    if (action === 'replay') {
      if (row.kind !== 'delivery') return setMessage({ text: 'r replays a delivery: move the cursor onto one', tone: 'error' });
      return run(`replaying delivery ${short(row.id)}`, async () => {
        const r = await api.post(`${base}/deliveries/${encodeURIComponent(row.id)}/replay`);
        return `delivery ${short(r.delivery.id)} queued to be sent again`;
      });
    }
    const endpoint = row.endpoint_id;
    if (!endpoint) return setMessage({ text: 'this delivery went to an invoice’s webhook_url, not to an endpoint', tone: 'error' });
    if (action === 'ping') {
      return run(`pinging endpoint ${short(endpoint)}`, async () => {
        const r = await api.post(`${base}/endpoints/${encodeURIComponent(endpoint)}/ping`, { message: 'ping' });
        return `ping sent to endpoint ${short(endpoint)} as event ${r.delivery.event_id}`;
      });
    }
    confirm(`Send every exhausted delivery of endpoint ${short(endpoint)} again?`, () =>
      run(`replaying the exhausted deliveries of endpoint ${short(endpoint)}`, async () => {
        const ids = await exhaustedOfEndpoint(api, row.account_id, endpoint);
        for (const id of ids) await api.post(`${base}/deliveries/${encodeURIComponent(id)}/replay`);
        return `${ids.length} exhausted deliveries of endpoint ${short(endpoint)} queued to be sent again`;
      }),
    );
  };

  const keyAction = (action: 'rotate' | 'disable') => {
    const k = snap!.keys!.items[cursorNow()];
    if (!k || !needMember()) return;
    confirm(action === 'rotate' ? `Rotate key ${k.key_id} (its secret is replaced; the old one works 10 more minutes)?` : `Disable key ${k.key_id}?`, () =>
      run(`${action === 'rotate' ? 'rotating' : 'disabling'} key ${k.key_id}`, async () => {
        const r = await api.post(`${accountPath(k.account_id)}/keys/${encodeURIComponent(k.key_id)}/${action}`, { as });
        return action === 'rotate'
          ? `key ${r.key.key_id} rotated; new secret: ${r.key.secret} (shown once; the previous one works until ${r.key.previous_secret_valid_until ?? 'now'})`
          : `key ${r.key.key_id}: ${r.key.status}`;
      }),
    );
  };

  const cancelRefund = () => {
    const row = refundRows(snap!)[cursorNow()];
    if (!row) return;
    if (row.kind !== 'refund') return setMessage({ text: 'c cancels a refund: move the cursor onto one', tone: 'error' });
    if (!needMember()) return;
    const what = `refund ${short(row.id)}`;
    confirm(`Cancel ${what} (its amount may be refunded again)?`, () =>
      withOtp(`Two-factor code of ${as} to cancel ${what}:`, (otp) =>
        run(`cancelling ${what}`, async () => {
          const r = await api.post(`${accountPath(row.account_id)}/refunds/${encodeURIComponent(row.id)}/cancel`, { as, otp });
          return `refund ${r.id}: ${r.status}`;
        }),
      ),
    );
  };

  const show = (s: DashboardScreen) => {
    setHelp(false);
    if (s === screen) return;
    setScreen(s);
    setSelected(0);
  };

  const cancelled = () => setMessage({ text: 'cancelled; nothing changed', tone: 'info' });
  /** While a prompt is up every key is its own (one input handler: no hand-over between components). */
  const promptKey = (p: Prompt, input: string, key: Key) => {
    if (p.kind === 'confirm') {
      const yes = confirmAnswer(input, key);
      if (yes === null) return;
      setPrompt(null);
      return yes ? p.next() : cancelled();
    }
    const step = maskedStep(p.value, input, key);
    if (!('done' in step)) return setPrompt({ ...p, value: step.value });
    setPrompt(null);
    return step.done === null ? cancelled() : p.next(step.done);
  };

  useKeys((input, key) => {
    if (promptNow.current) return promptKey(promptNow.current, input, key);
    if (input === 'q') return exit();
    if (input === '?') return setHelp((h) => !h);
    if (key.escape) return help ? setHelp(false) : setMessage(null);
    const n = Number(input);
    if (Number.isInteger(n) && n >= 1 && n <= DASHBOARD_SCREENS.length) return show(DASHBOARD_SCREENS[n - 1]!);
    const at = DASHBOARD_SCREENS.indexOf(screen);
    if (key.rightArrow || key.tab) return show(DASHBOARD_SCREENS[(at + 1) % DASHBOARD_SCREENS.length]!);
    if (key.leftArrow) return show(DASHBOARD_SCREENS[(at + DASHBOARD_SCREENS.length - 1) % DASHBOARD_SCREENS.length]!);
    if (input === 'a' && !fixedAccount) {
      setSelected(0);
      return setAccountAt((i) => (i + 1 >= accounts.length ? -1 : i + 1));
    }
    if (key.upArrow || input === 'k') return setSelected(Math.max(0, cursorNow() - 1));
    if (key.downArrow || input === 'j') return setSelected(Math.min(Math.max(0, list.length - 1), cursorNow() + 1));
    if (!ready || help) return;
    if (screen === 'approvals' && (input === 'y' || input === 'n' || input === 'c'))
      return decide(input === 'y' ? 'approve' : input === 'n' ? 'reject' : 'cancel');
    if (screen === 'webhooks' && (input === 'r' || input === 'R' || input === 'p'))
      return webhookAction(input === 'r' ? 'replay' : input === 'R' ? 'replay-endpoint' : 'ping');
    if (screen === 'keys' && (input === 'r' || input === 'd')) return keyAction(input === 'r' ? 'rotate' : 'disable');
    if (screen === 'refunds' && input === 'c') return cancelRefund();
    if (screen === 'log' && input === 'l') return setLevel((l) => LEVELS[(LEVELS.indexOf(l) + 1) % LEVELS.length]!);
  });

  // Header 2 lines, rule 1, status 2 (a refusal may take two): one line short of the screen, so ink
  // rewrites its own lines instead of clearing the whole terminal.
  const bodyHeight = Math.max(4, rows - 6);
  const name = (id: string) => accounts.find((a) => a.id === id)?.name ?? short(id);
  const props: ScreenProps | null = ready ? { snap, selected: cursor, height: bodyHeight - 1, width: columns - 1, accountName: name } : null;
  const scope = account ? `account ${name(account)}` : 'all accounts';

  return (
    // One column short of the terminal: a line that fills the last column leaves some terminals'
    // cursor in a pending wrap, and the next in-place update would start a line too low.
    <Box flexDirection="column" width={columns - 1}>
      <Text wrap="truncate">
        <Text bold color={tint(look, 'green')}>
          Coinkeep
        </Text>
        {snap ? `  ${snap.daemon.network} · ${snap.daemon.database} · up ${uptime(snap.daemon.uptime_seconds)} · pid ${snap.daemon.pid}` : '  connecting…'}
        {`  [${scope}${fixedAccount ? '' : ' · a: change'}]${as ? `  as ${as}` : ''}`}
      </Text>
      <Text wrap="truncate">
        {DASHBOARD_SCREENS.map((s, i) => (
          <Text key={s} inverse={s === screen && !help} bold={s === screen}>
            {` ${i + 1} ${TITLES[s]} `}
          </Text>
        ))}
        {/* The level filter before the help: seven screens leave the end of the line to a wide terminal. */}
        <Text dimColor>{`${screen === 'log' ? `  l level: ${level}+` : ''}  ? help  q quit`}</Text>
      </Text>
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {help ? (
          <HelpScreen />
        ) : !props ? (
          <Text>{conn.state === 'down' ? ' ' : 'loading…'}</Text>
        ) : screen === 'overview' ? (
          <OverviewScreen {...props} />
        ) : screen === 'payments' ? (
          <PaymentsScreen {...props} />
        ) : screen === 'approvals' ? (
          <ApprovalsScreen {...props} />
        ) : screen === 'webhooks' ? (
          <WebhooksScreen {...props} />
        ) : screen === 'keys' ? (
          <KeysScreen {...props} />
        ) : screen === 'refunds' ? (
          <RefundsScreen {...props} />
        ) : (
          <LogScreen {...props} level={level} />
        )}
      </Box>
      <Text>{'─'.repeat(Math.max(10, columns - 2))}</Text>
      {prompt?.kind === 'otp' ? (
        <MaskedLine label={prompt.label} length={prompt.value.length} />
      ) : prompt?.kind === 'confirm' ? (
        <ConfirmLine question={prompt.question} />
      ) : conn.state === 'down' ? (
        <Box height={2} overflow="hidden">
          <Text color={tint(look, 'red')} bold>
            {`daemon not reachable: ${conn.error}; retrying every second`}
          </Text>
        </Box>
      ) : message ? (
        <Box height={2} overflow="hidden">
          <Text color={tint(look, message.tone === 'error' ? 'red' : message.tone === 'ok' ? 'green' : 'yellow')}>{message.text}</Text>
        </Box>
      ) : (
        <Text dimColor wrap="truncate">
          {conn.state === 'up' ? 'live · connected to coinkeepd' : 'connecting to coinkeepd…'}
        </Text>
      )}
    </Box>
  );
}
