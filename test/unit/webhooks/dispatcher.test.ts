import test from 'ava';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';
import type { AttemptStore, Claimed, DueDelivery, Outcome } from '../../../src/webhooks/attempt.store';
import type { CallbackSecrets } from '../../../src/webhooks/callback-secret';
import { DeliverySigner } from '../../../src/webhooks/delivery-signer';
import { CLAIM_FRESH_MS } from '../../../src/webhooks/dispatch-policy';
import { WebhookDispatcher } from '../../../src/webhooks/dispatcher';
import type { WebhookSecrets } from '../../../src/webhooks/secrets';
import type { AttemptResult, WebhookPost } from '../../../src/webhooks/transport';

const due = (id: string): DueDelivery => ({
  id,
  account_id: 'account',
  event_id: `event-${id}`,
  event_type: 'invoice.paid',
  endpoint_id: null,
  url: 'https://merchant.example/hook',
  status: 'pending',
  attempts: 0,
  schedule_attempts: 0,
  next_attempt_at: '2026-01-01T00:00:00.000Z',
});

/** The store as the dispatcher sees it: due rows leave on a claim and come back on a release. */
class FakeAttempts {
  readonly due = new Map<string, DueDelivery>();
  readonly claims: Claimed[] = [];
  readonly released: Claimed[] = [];
  readonly recorded: Outcome[] = [];

  constructor(rows: DueDelivery[]) {
    for (const r of rows) this.due.set(r.id, r);
  }
  fanOutNew = async (): Promise<void> => undefined;
  scanDue = async (): Promise<DueDelivery[]> => [...this.due.values()];
  dueOf = async (): Promise<DueDelivery[]> => [];
  claim = async (rows: DueDelivery[], now: Date, outcomes: () => Outcome[]): Promise<Claimed[]> => {
    this.recorded.push(...outcomes());
    const claimed = rows
      .filter((d) => this.due.delete(d.id))
      .map(
        (d) =>
          ({
            delivery: d,
            scheduleAttempt: 1,
            claimedAt: now.getTime(),
            attempt: { id: `attempt-${this.claims.length}` },
            sealedSecret: null,
            body: '{}',
          }) as unknown as Claimed,
      );
    this.claims.push(...claimed);
    return claimed;
  };
  record = async (outcomes: Outcome[]): Promise<void> => void this.recorded.push(...outcomes);
  release = async (claims: Claimed[]): Promise<void> => {
    this.released.push(...claims);
    for (const c of claims) this.due.set(c.delivery.id, c.delivery);
  };
}

/** A transport whose answers the test gives, one at a time. */
class HeldTransport {
  readonly window = 1;
  readonly sent: string[] = [];
  private readonly answers: Array<(r: AttemptResult) => void> = [];
  post = (post: WebhookPost): Promise<AttemptResult> => {
    this.sent.push(post.headers['X-Event-Id']!);
    return new Promise((resolve) => this.answers.push(resolve));
  };
  answerNext(durationMs = 1): void {
    this.answers.shift()!({ ok: true, responseStatus: 200, error: null, durationMs });
  }
  /** Answers every attempt, those the answers start included, until none is out. */
  async drain(durationMs: number): Promise<void> {
    while (this.answers.length > 0) {
      this.answerNext(durationMs);
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  cancel = (): void => undefined;
  close = (): void => undefined;
}

async function until(what: string, cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

function setup(
  rows = [due('first'), due('second')],
  limits = { maxInFlight: 1, perTarget: 1 },
): { clock: FakeClock; attempts: FakeAttempts; transport: HeldTransport; dispatcher: WebhookDispatcher } {
  const clock = new FakeClock();
  const attempts = new FakeAttempts(rows);
  const transport = new HeldTransport();
  const dispatcher = new WebhookDispatcher(
    {
      attempts: attempts as unknown as AttemptStore,
      signer: new DeliverySigner({
        secrets: {} as WebhookSecrets,
        callbackSecrets: { secretFor: async () => 'callback-secret' } as unknown as CallbackSecrets,
      }),
      transport,
      clock,
      logger: silentLogger,
      signal: new AbortController().signal,
    },
    // One slot by default: the second claim waits in memory while the first attempt is out.
    limits,
  );
  return { clock, attempts, transport, dispatcher };
}

test('a claim that waited past its freshness is given back, claimed anew and sent once', async (t) => {
  const { clock, attempts, transport, dispatcher } = setup();
  await dispatcher.tick();
  await until('the first attempt', () => transport.sent.length === 1);
  t.is(attempts.claims.length, 2, 'both claimed in one batch ahead of the slot');

  clock.advance(CLAIM_FRESH_MS);
  transport.answerNext();
  await until('the stale claim to be given back and claimed again', () => attempts.claims.length === 3);
  t.deepEqual(
    attempts.released.map((c) => c.delivery.id),
    ['second'],
  );
  t.is(attempts.released[0], attempts.claims[1], 'the claim given back is the stale one');

  await until('the second attempt', () => transport.sent.length === 2);
  t.deepEqual(transport.sent, ['event-first', 'event-second']);
  transport.answerNext();
  await dispatcher.idle();
  t.deepEqual(
    attempts.recorded.map((o) => o.claimed),
    [attempts.claims[0], attempts.claims[2]],
    'outcomes are written for the two claims sent, none for the one given back',
  );
  await dispatcher.close();
});

test('a claim still fresh when its slot frees is sent as claimed', async (t) => {
  const { clock, attempts, transport, dispatcher } = setup();
  await dispatcher.tick();
  await until('the first attempt', () => transport.sent.length === 1);

  clock.advance(CLAIM_FRESH_MS - 1);
  transport.answerNext();
  await until('the second attempt', () => transport.sent.length === 2);
  transport.answerNext();
  await dispatcher.idle();
  t.deepEqual(attempts.released, []);
  t.is(attempts.claims.length, 2);
  t.deepEqual(transport.sent, ['event-first', 'event-second']);
  await dispatcher.close();
});

test('a target is claimed two rounds ahead until it answers quickly, then sixteen; a slow answer brings it back to two', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => due(`d${String(i).padStart(2, '0')}`));
  const { attempts, transport, dispatcher } = setup(rows, { maxInFlight: 2, perTarget: 2 });
  await dispatcher.tick();
  await until('the first round', () => transport.sent.length === 2);
  t.is(attempts.claims.length, 4, 'unknown target: two rounds of two');

  transport.answerNext(1);
  await until('a deeper claim', () => attempts.claims.length > 4);
  t.is(attempts.claims.length, 1 + 32, 'quick target: sixteen rounds of two in hand (one answered)');

  // A slow answer: no more claims until fewer than a round wait.
  transport.answerNext(60_000);
  const before = attempts.claims.length;
  for (let i = 0; i < 10; i++) {
    await until('the next attempt', () => transport.sent.length > 3 + i);
    transport.answerNext(60_000);
  }
  await until('the last of those attempts', () => transport.sent.length === 14);
  t.is(attempts.claims.length, before, 'nothing claimed while the slow target still held more than its two rounds');
  await transport.drain(60_000);
  await dispatcher.idle();
  t.is(transport.sent.length, 40, 'every delivery sent once');
  t.is(new Set(transport.sent).size, 40);
  await dispatcher.close();
});
