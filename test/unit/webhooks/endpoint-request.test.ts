import test from 'ava';
import { EVENT_TYPES } from '../../../src/shared/events';
import { ApiError } from '../../../src/shared/errors';
import { parseEventTypes, subscribes } from '../../../src/webhooks/endpoint.request';

const fieldOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.code}:${String(e.details.field)}`;
    throw e;
  }
  return undefined;
};

test('event types are the 30 (PRODUCT §10, §16 and §17), kept sorted and distinct; "*" stands alone', (t) => {
  t.is(EVENT_TYPES.length, 30);
  t.deepEqual(parseEventTypes(['withdrawal.completed', 'invoice.paid']), ['invoice.paid', 'withdrawal.completed']);
  t.deepEqual(parseEventTypes(['*']), ['*']);
  t.deepEqual(parseEventTypes([...EVENT_TYPES]), [...EVENT_TYPES].sort());
  for (const bad of [[], ['*', 'ping'], ['invoice.paid', 'invoice.paid'], ['Invoice.Paid'], [3], 'invoice.paid', null]) {
    t.is(
      fieldOf(() => parseEventTypes(bad)),
      'validation_error:event_types',
      JSON.stringify(bad),
    );
  }
});

test('an endpoint gets the types it lists, "*" gets all but a ping, which only reaches the endpoint it names', (t) => {
  t.true(subscribes(['invoice.paid'], 'invoice.paid'));
  t.false(subscribes(['invoice.paid'], 'invoice.expired'));
  t.true(subscribes(['*'], 'static_address.archived'));
  t.false(subscribes(['*'], 'ping'));
  t.false(subscribes(['ping'], 'ping'));
});
