import { setMaxListeners } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_DNS, dnsResolver, TargetGuard } from '../shared/target-guard';
import { HttpTransport } from './http-transport';
import { boundsOf, Slots } from './in-flight-limits';
import type { NumberedPost, ThreadTransportOptions, ToThread } from './thread-transport';
import { NOT_SENT, type AttemptResult } from './transport';

/**
 * The thread of ThreadTransport (thread-transport.ts): the same HttpTransport, its target guard on
 * the configured DNS, and the dispatcher's bounds on what is in flight (per target, per account and
 * overall). A post handed over waits here, in its target's line, for a free slot, so a slot is
 * refilled the moment an answer comes in. Results go back in batches, one message per turn of the loop.
 */
const { allowPrivate, dns, timeoutMs, ...limits } = workerData as ThreadTransportOptions;
const bounds = boundsOf(limits);
const http = new HttpTransport(new TargetGuard({ allowPrivate, resolve: dnsResolver(dns ?? DEFAULT_DNS) }), { timeoutMs });
/** Cuts short what is in flight at a stop; posts after it get a fresh one. */
let stop = new AbortController();
setMaxListeners(0, stop.signal);
const waiting = new Map<string, NumberedPost[]>();
const slots = new Slots();
let done: Array<{ id: number; result: AttemptResult }> = [];
let replyScheduled = false;

/**
 * Results go back in batches: at once when REPLY_BATCH are in, else within REPLY_AFTER_MS of the
 * first. A message between threads costs far more than a result in it, and nothing waits on a
 * result but the dispatcher's next hand-over (the slots are refilled here, from the waiting lines).
 */
const REPLY_BATCH = 16;
const REPLY_AFTER_MS = 1;
let replyTimer: NodeJS.Timeout | null = null;

const sendReplies = (): void => {
  if (replyTimer) clearTimeout(replyTimer);
  replyTimer = null;
  replyScheduled = false;
  const batch = done;
  done = [];
  if (batch.length > 0) parentPort!.postMessage(batch);
};

const reply = (id: number, result: AttemptResult): void => {
  done.push({ id, result });
  if (done.length >= REPLY_BATCH) {
    if (!replyScheduled) setImmediate(sendReplies);
    replyScheduled = true;
    return;
  }
  replyTimer ??= setTimeout(sendReplies, REPLY_AFTER_MS);
};

const start = (p: NumberedPost): void => {
  slots.take(p.target, p.account);
  void http.post(p, stop.signal).then((result) => {
    slots.free(p.target, p.account);
    reply(p.id, result);
    // Its own target's line first, then any line the overall or the account's bound held back.
    startWaiting(p.target);
    if (slots.inFlight < bounds.maxInFlight) for (const target of [...waiting.keys()]) startWaiting(target);
  });
};

const startWaiting = (target: string): void => {
  const line = waiting.get(target);
  if (!line) return;
  while (line.length > 0 && slots.fits(target, line[0]!.account, bounds)) start(line.shift()!);
  if (line.length === 0) waiting.delete(target);
};

/** Answers the waiting attempts (of one target, or all) as never sent: the dispatcher gives them back. */
const dropWaiting = (target?: string): void => {
  for (const [t, line] of waiting) {
    if (target !== undefined && t !== target) continue;
    for (const p of line) reply(p.id, NOT_SENT);
    waiting.delete(t);
  }
};

parentPort!.on('message', (m: ToThread) => {
  if (m.kind === 'stop') {
    dropWaiting();
    stop.abort();
    stop = new AbortController();
    setMaxListeners(0, stop.signal);
    return;
  }
  if (m.kind === 'cancel') {
    dropWaiting(m.target);
    return;
  }
  for (const p of m.posts) {
    const line = waiting.get(p.target);
    if (line) line.push(p);
    else waiting.set(p.target, [p]);
  }
  for (const p of m.posts) startWaiting(p.target);
});
