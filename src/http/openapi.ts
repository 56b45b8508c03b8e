import { z } from 'zod';
import { ERROR_STATUS, errorsOf, type ApiRoute, type ErrorCode } from '../shared/api-route';
import { API_VERSION } from './app';

type Json = Record<string, unknown>;

export interface WebhookEvent {
  type: string;
  schema: z.ZodType;
}

const SIGNATURE_DOC =
  'Every signed request carries X-API-Key, X-Timestamp (Unix seconds) and X-Signature: the lower-case hex HMAC-SHA256, keyed with the ' +
  'secret as given, of the canonical string `X-Timestamp "\\n" METHOD "\\n" target (path and query as sent) "\\n" hex(SHA-256(body bytes))`. ' +
  'The timestamp must be within 300 seconds of server time and a signature is accepted once.';

const CONTENT_TYPES = { csv: 'text/csv', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  400: 'Bad request',
  401: 'Not authenticated',
  403: 'Refused',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  422: 'Not processable',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Unavailable',
  504: 'Timed out',
};

/**
 * The OpenAPI 3.1 document of the merchant API, generated from the route declarations and their
 * zod schemas (the ones the edge checks bodies with) and the webhook events' schemas.
 */
export function buildOpenApi(routes: readonly ApiRoute[], events: readonly WebhookEvent[]): Json {
  const components: Record<string, Json> = {};
  const schemaOf = (schema: z.ZodType, io: 'input' | 'output'): Json => {
    // Wrapped so a named schema itself becomes a $ref too; its definitions move to components.
    const wrapped = z.toJSONSchema(z.object({ x: schema }), { io, unrepresentable: 'any' }) as unknown as Json & {
      properties: { x: Json };
      $defs?: Record<string, Json>;
    };
    for (const [name, def] of Object.entries(wrapped.$defs ?? {})) components[name] ??= relink(def) as Json;
    return relink(wrapped.properties.x) as Json;
  };

  // One named error schema per distinct set of codes of a status, referenced by every route answering that set.
  const errorSets = new Map<string, string>();
  const errorsRef = (status: number, codes: ErrorCode[]): Json => {
    const key = `${status}:${codes.join(',')}`;
    let name = errorSets.get(key);
    if (name === undefined) {
      name = `Error${status}${String.fromCharCode(65 + [...errorSets.keys()].filter((k) => k.startsWith(`${status}:`)).length)}`;
      errorSets.set(key, name);
      components[name] = errorSchema(codes);
    }
    return { $ref: `#/components/schemas/${name}` };
  };

  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route, schemaOf, errorsRef);
  }

  const webhooks: Record<string, Json> = {};
  for (const e of events) {
    webhooks[e.type] = {
      post: {
        operationId: `event_${e.type.replace(/\./g, '_')}`,
        summary: `The ${e.type} event`,
        description: 'Signed: X-Signature = "sha256=" + hex(HMAC-SHA256(endpoint secret, X-Timestamp + "." + raw body)). Answer 2xx within 10 seconds.',
        parameters: ['X-Event-Id', 'X-Event-Type', 'X-Timestamp', 'X-Signature'].map((name) => ({
          name,
          in: 'header',
          required: true,
          schema: { type: 'string' },
        })),
        requestBody: { required: true, content: { 'application/json': { schema: schemaOf(e.schema, 'output') } } },
        responses: { '2XX': { description: 'Received' } },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Coinkeep merchant API',
      version: API_VERSION,
      description: 'JSON in and out, snake_case fields, amounts as decimal strings, times in RFC 3339 UTC. Clients ignore unknown fields.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    paths,
    webhooks,
    components: {
      schemas: { ...sortKeys(components), Error: errorSchema(Object.keys(ERROR_STATUS) as ErrorCode[], true) },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: SIGNATURE_DOC },
        Timestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp', description: 'Unix time in whole seconds' },
        Signature: { type: 'apiKey', in: 'header', name: 'X-Signature', description: SIGNATURE_DOC },
      },
    },
  };
}

function operation(route: ApiRoute, schemaOf: (s: z.ZodType, io: 'input' | 'output') => Json, errorsRef: (status: number, codes: ErrorCode[]) => Json): Json {
  const parameters: Json[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });
  }
  if (route.query) {
    const q = schemaOf(route.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: 'query', required: (q.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) });
    }
  }
  if (route.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: '1 to 128 printable ASCII characters; a repeat returns the original response (Idempotent-Replayed: true)',
      schema: { type: 'string', minLength: 1, maxLength: 128 },
    });
  }
  parameters.push({ name: 'X-API-Version', in: 'header', required: false, schema: { type: 'string', enum: [API_VERSION] } });

  const responses: Record<string, Json> = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    const content: Json = { 'application/json': { schema: schemaOf(schema, 'output') } };
    if (route.exports && status === '200') {
      for (const type of Object.values(CONTENT_TYPES)) content[type] = { schema: { type: 'string' } };
    }
    responses[status] = { description: STATUS_TEXT[Number(status)] ?? 'OK', content };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(route)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`,
      ...(status === 401 ? { headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Service-HMAC-SHA256' } } } } : {}),
      ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: errorsRef(status, codes) } },
    };
  }

  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters,
    responses,
  };
  if (route.permissions) op.description = `Permission: ${route.permissions.join(' or ')}.`;
  const signed = { ApiKey: [], Timestamp: [], Signature: [] };
  op.security = route.auth === 'signed' ? [signed] : route.auth === 'optional' ? [signed, {}] : [];
  if (route.body) {
    op.requestBody = { required: !route.bodyOptional, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
  }
  return op;
}

function errorSchema(codes: ErrorCode[], described = false): Json {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: {
          code: { type: 'string', enum: codes },
          message: { type: 'string' },
          details: described
            ? {
                type: 'object',
                description: 'may carry field, required, retry_after, server_time, reason, scope, supported, ip, invoice_id, active_address_id, docs_url',
              }
            : { type: 'object' },
        },
      },
    },
  };
}

/** Points zod's local `#/$defs/X` references at the document's components and drops `$schema`. */
function relink(node: unknown, inProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => relink(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (!inProperties && (k === '$schema' || k === '$defs' || k === 'id')) continue;
    out[k] =
      !inProperties && k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : relink(v, !inProperties && k === 'properties');
  }
  return out;
}

const sortKeys = (o: Record<string, Json>): Record<string, Json> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
