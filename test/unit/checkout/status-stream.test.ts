import { PassThrough } from 'node:stream';
import test from 'ava';
import type { PayerView } from '../../../src/checkout/checkout.service';
import { StatusStreams } from '../../../src/checkout/status-stream';
import { InvoiceChanges } from '../../../src/invoices/invoice-changes';
import { tempStore } from '../../helpers/memory-store';

const view = (status: PayerView['status']) => ({ id: 'inv', status }) as PayerView;

function collect(out: PassThrough): { data: string[]; ended: () => boolean } {
  const data: string[] = [];
  let ended = false;
  out.setEncoding('utf8');
  out.on('data', (c: string) => {
    for (const frame of c.split('\n\n')) if (frame.startsWith('data: ')) data.push(JSON.parse(frame.slice(6)).status);
  });
  out.on('end', () => (ended = true));
  return { data, ended: () => ended };
}

test('pages of one invoice share one read per committed change, none while nothing changes; a final status ends them', async (t) => {
  const store = await tempStore(t);
  const changes = new InvoiceChanges();
  let reads = 0;
  let current = view('new');
  const streams = new StatusStreams({
    changes,
    read: async () => {
      reads++;
      return current;
    },
    now: () => Date.now(),
  });
  const pages = Array.from({ length: 50 }, () => new PassThrough());
  const seen = pages.map(collect);
  for (const p of pages) streams.start('inv', '10.0.0.1', p, current);
  t.is(streams.open, 50);
  await new Promise((r) => setTimeout(r, 50));
  t.is(reads, 0, 'no read while nothing changes');

  current = view('pending');
  // Told at commit, not before: the read happens after the transaction.
  await store.write(async (em) => {
    changes.changed(em, 'inv');
    changes.changed(em, 'inv');
    await new Promise((r) => setTimeout(r, 20));
    t.is(reads, 0);
  });
  await new Promise((r) => setTimeout(r, 20));
  t.is(reads, 1, 'one read for all fifty pages');
  t.true(seen.every((s) => s.data.join() === 'new,pending'));

  // A rolled-back change tells nobody.
  await t.throwsAsync(
    store.write(async (em) => {
      changes.changed(em, 'inv');
      throw new Error('rolled back');
    }),
  );
  await new Promise((r) => setTimeout(r, 20));
  t.is(reads, 1);

  current = view('paid');
  await store.write(async (em) => changes.changed(em, 'inv'));
  await new Promise((r) => setTimeout(r, 20));
  t.true(seen.every((s) => s.data.join() === 'new,pending,paid' && s.ended()));
  t.is(streams.open, 0);
  t.is(changes.watched, 0, 'nothing left listening');
});
