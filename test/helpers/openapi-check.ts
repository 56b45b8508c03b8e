/**
 * Every answer a black-box test sees from a `/v1` route is checked against the OpenAPI document:
 * the route and method must be documented, the status listed for it, and the body must match the
 * listed schema (JSON) or media type (exports). A mismatch throws, so the test that saw it fails
 * with the reason. The JSON Schema check covers the keywords the document uses. The document is
 * the published one, docs/openapi.json, as `npm run build` writes it from the code (a unit test
 * fails when it is stale), read once per process: generating it costs most of a second.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './vectors';

type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

let compiled: { doc: Schema; routes: Array<{ template: string; re: RegExp; params: number; ops: Record<string, Operation> }> } | undefined;

function routes() {
  if (compiled) return compiled;
  const doc = JSON.parse(readFileSync(path.join(projectRoot(), 'docs', 'openapi.json'), 'utf8')) as Schema;
  const list = Object.entries(doc.paths as Record<string, Record<string, Operation>>).map(([template, ops]) => ({
    template,
    re: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
    ops,
  }));
  // A literal segment wins over a parameter (/v1/withdrawals/estimate before /v1/withdrawals/{id}).
  list.sort((a, b) => a.params - b.params);
  compiled = { doc, routes: list };
  return compiled;
}

/** Throws when an answer of a `/v1` route does not match the document. */
export function checkAgainstOpenApi(method: string, target: string, status: number, contentType: string | undefined, text: string): void {
  const path = target.split('?')[0]!;
  const m = method.toUpperCase();
  if (!path.startsWith('/v1/') || m === 'HEAD' || m === 'OPTIONS') return;
  const { doc, routes: list } = routes();
  const where = `${m} ${target} answered ${status}`;
  const route = list.find((r) => r.re.test(path));
  const op = route?.ops[m.toLowerCase()];
  const json = (contentType ?? '').includes('json');
  let body: unknown;
  if (json && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`OpenAPI check: ${where} with a body that is not JSON`);
    }
  }
  if (!op) {
    // The app's answer to a route that does not exist, and its refusals made before any route is
    // chosen (body size, version, missing signature headers, a blocked address), are fine anywhere.
    const code = (body as Schema | undefined)?.error?.code;
    if ((status === 404 && code === 'not_found') || BEFORE_ROUTING.includes(code)) return;
    throw new Error(
      `OpenAPI check: ${where}, but the document has no ${m} ${route?.template ?? path}. ` +
        "Declare the route in its module's *.api.ts, mount it with mount(), list it in src/http/api-registry.ts, " +
        'and write docs/openapi.json again (`npm run build`, or `node dist/scripts/write-openapi.js` after tsc).',
    );
  }
  const response = op.responses[String(status)];
  if (!response)
    throw new Error(
      `OpenAPI check: ${where}, a status the document does not list for ${m} ${route!.template} (it lists ${Object.keys(op.responses).join(', ')})`,
    );
  const content = response.content ?? {};
  if (!json) {
    const mime = (contentType ?? '').split(';')[0]!.trim();
    if (text !== '' && !(mime in content)) throw new Error(`OpenAPI check: ${where} with Content-Type ${mime || '(none)'}, which the document does not list`);
    return;
  }
  const schema = content['application/json']?.schema;
  if (!schema) throw new Error(`OpenAPI check: ${where} with JSON, but the document lists no JSON body for it`);
  const problem = validate(doc, schema, body, '$');
  if (problem) throw new Error(`OpenAPI check: ${where}; the body does not match the document: ${problem}`);
}

const BEFORE_ROUTING = ['payload_too_large', 'unsupported_api_version', 'auth.missing_header', 'rate_limited'];

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

function validate(doc: Schema, schema: Schema, value: unknown, at: string): string | null {
  if (schema.$ref) {
    const target = (schema.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: Schema, k: string) => o?.[k], doc);
    if (!target) return `${at}: unresolved ${schema.$ref}`;
    return validate(doc, target, value, at);
  }
  if (schema.anyOf && !(schema.anyOf as Schema[]).some((s) => validate(doc, s, value, at) === null)) return `${at}: matches none of anyOf`;
  if (schema.oneOf && (schema.oneOf as Schema[]).filter((s) => validate(doc, s, value, at) === null).length !== 1)
    return `${at}: does not match exactly one of oneOf`;
  for (const s of (schema.allOf ?? []) as Schema[]) {
    const p = validate(doc, s, value, at);
    if (p) return p;
  }
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number')))
      return `${at}: ${JSON.stringify(value)?.slice(0, 80)} is ${t}, not ${types.join(' or ')}`;
  }
  if ('const' in schema && value !== schema.const) return `${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`;
  if (schema.enum && !(schema.enum as unknown[]).includes(value))
    return `${at}: ${JSON.stringify(value)} is not one of ${(schema.enum as unknown[]).join(', ')}`;
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return `${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`;
    if (schema.minLength !== undefined && [...value].length < schema.minLength) return `${at}: shorter than ${schema.minLength}`;
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) return `${at}: longer than ${schema.maxLength}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${at}: below ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${at}: above ${schema.maximum}`;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return `${at}: fewer than ${schema.minItems} items`;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return `${at}: more than ${schema.maxItems} items`;
    if (schema.items) {
      for (let i = 0; i < value.length; i++) {
        const p = validate(doc, schema.items, value[i], `${at}[${i}]`);
        if (p) return p;
      }
    }
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    for (const k of (schema.required ?? []) as string[]) if (!(k in obj)) return `${at}: lacks ${k}`;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) {
        const p = validate(doc, props[k], v, `${at}.${k}`);
        if (p) return p;
      } else if (schema.additionalProperties === false) {
        return `${at}: has ${k}, which the document does not declare`;
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        const p = validate(doc, schema.additionalProperties, v, `${at}.${k}`);
        if (p) return p;
      }
    }
  }
  return null;
}
