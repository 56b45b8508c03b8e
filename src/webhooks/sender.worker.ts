import { parentPort, workerData } from 'node:worker_threads';
import { TargetGuard } from '../shared/target-guard';
import { WebhookSender, type AttemptResult } from './sender';
import type { SenderThreadData, ToSender } from './sender-thread';

/**
 * The sender's thread (see sender-thread.ts): the same WebhookSender, its target guard on the
 * system resolver. Results go back in batches, one message per turn of this thread's loop.
 */
const { allowPrivate, timeoutMs } = workerData as SenderThreadData;
const sender = new WebhookSender(new TargetGuard({ allowPrivate }), { timeoutMs });
/** Cuts short what is in flight at a stop; posts after it get a fresh one. */
let stop = new AbortController();
let done: Array<{ id: number; result: AttemptResult }> = [];
let replyScheduled = false;

const reply = (): void => {
  replyScheduled = false;
  const batch = done;
  done = [];
  parentPort!.postMessage(batch);
};

parentPort!.on('message', (m: ToSender) => {
  if (m.kind === 'stop') {
    stop.abort();
    stop = new AbortController();
    return;
  }
  for (const p of m.posts) {
    void sender.post(p.target, p.event, p.secret, new Date(p.now), stop.signal).then((result) => {
      done.push({ id: p.id, result });
      if (!replyScheduled) {
        replyScheduled = true;
        setImmediate(reply);
      }
    });
  }
});
