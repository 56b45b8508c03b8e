import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validate } from '@readme/openapi-parser';
import { openApiDocument } from '../../../src/http/api-registry';
import { EVENT_TYPES } from '../../../src/shared/events';
import { checkShape } from '../../../src/shared/schema';
import { CreateInvoiceBody } from '../../../src/invoices/invoice.api';
import { ApiError } from '../../../src/shared/errors';
import { projectRoot } from '../../helpers/vectors';

const doc = () => JSON.parse(JSON.stringify(openApiDocument())) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('the document is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async (t) => {
  const result = await validate(doc() as Parameters<typeof validate>[0]);
  t.true(result.valid, JSON.stringify(result));
  t.is(doc().openapi, '3.1.0');
});

test('it names the signature headers as a security scheme, every webhook event, and per route its error codes', (t) => {
  const d = doc();
  t.deepEqual(Object.keys(d.components.securitySchemes).sort(), ['ApiKey', 'Signature', 'Timestamp']);
  t.deepEqual(Object.keys(d.webhooks).sort(), [...EVENT_TYPES].sort());
  const create = d.paths['/v1/invoices'].post;
  t.deepEqual(create.security, [{ ApiKey: [], Timestamp: [], Signature: [] }]);
  t.true(create.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key'));
  const codes = (status: string) =>
    d.components.schemas[create.responses[status].content['application/json'].schema.$ref.split('/').pop()].properties.error.properties.code.enum;
  t.deepEqual(codes('422').sort(), ['idempotency.mismatch', 'no_allowed_coins']);
  t.true(codes('401').includes('auth.invalid_signature'));
  t.deepEqual(d.paths['/v1/currencies'].get.security, [{ ApiKey: [], Timestamp: [], Signature: [] }, {}]);
  t.deepEqual(d.paths['/v1/openapi.json'].get.security, []);
  t.truthy(d.paths['/v1/invoices'].get.responses['200'].content['text/csv']);
});

test('the request schema is the one the edge checks with: an unknown field, a wrong type and a missing field are validation_error on that field', (t) => {
  const d = doc();
  const body = d.paths['/v1/invoices'].post.requestBody.content['application/json'].schema;
  t.false(body.additionalProperties);
  t.deepEqual(body.required.sort(), ['amount', 'currency']);
  const fieldOf = (b: Record<string, unknown>) => {
    const err = t.throws(() => checkShape(CreateInvoiceBody, b, 'an invoice request'), { instanceOf: ApiError });
    t.is(err!.code, 'validation_error');
    return err!.details.field;
  };
  t.is(fieldOf({ amount: '1', currency: 'USD', colour: 'red' }), 'colour');
  t.is(fieldOf({ amount: 1, currency: 'USD' }), 'amount');
  t.is(fieldOf({ currency: 'USD' }), 'amount');
  t.is(fieldOf({ amount: '1', currency: 'USD', order_id: 'x'.repeat(129) }), 'order_id');
  t.notThrows(() => checkShape(CreateInvoiceBody, { amount: '1', currency: 'USD', order_id: null }, 'an invoice request'));
});

test('docs/openapi.json is the document the code generates (the build writes it)', (t) => {
  const file = JSON.parse(readFileSync(path.join(projectRoot(), 'docs', 'openapi.json'), 'utf8'));
  t.deepEqual(file, doc(), 'docs/openapi.json is stale: `npm run build` (or `node dist/scripts/write-openapi.js`) writes it; commit it with the route change');
});
