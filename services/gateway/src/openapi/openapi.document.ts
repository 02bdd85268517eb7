import { z } from 'zod';
import { ErrorBody, SkillName, SourceRef } from '#contracts';
import { API_VERSION } from '../api-info.js';
import { SKILL_HEADER, SOURCE_HEADER } from '../http/caller.js';
import { OPERATIONS, type Content, type Operation } from './operations.js';
import { SchemaComponents, type JsonSchema } from './schema-components.js';

/** `/memories/:id` → `/memories/{id}`; a trailing `*` (a path with slashes) → `{path}`. */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

function parameters(op: Operation, components: SchemaComponents): JsonSchema[] {
  const path = Object.entries(op.params ?? {}).map(([name, schema]) => ({
    name: name === '*' ? 'path' : name,
    in: 'path',
    required: true,
    schema: components.convert(schema, 'input'),
  }));
  const shape = op.query?.shape ?? {};
  const query = Object.entries(shape).map(([name, schema]) => ({
    name,
    in: 'query',
    required: !(schema as z.ZodType).safeParse(undefined).success,
    schema: components.convert(schema as z.ZodType, 'input'),
  }));
  // Creating endpoints (POST answering 201) take an Idempotency-Key (the interceptor applies it to exactly these) and
  // the writer's headers.
  const creating =
    op.method === 'POST' && 201 in op.responses
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description:
              'Makes a retry safe: the same key and body get the first answer again and create nothing ' +
              'twice; the same key with another body, or while the first request runs, is 409 CONFLICT. ' +
              'Kept 24 h, per tenant and path.',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
          },
          // What they create records its writer (provenance): these two headers are the client's part of it.
          {
            name: SOURCE_HEADER,
            in: 'header',
            required: false,
            description: 'Where the content came from (a URL or document): recorded as provenance.source.',
            schema: components.convert(SourceRef, 'input'),
          },
          {
            name: SKILL_HEADER,
            in: 'header',
            required: false,
            description: 'The skill making the request: recorded as provenance.via = skill:<name>.',
            schema: components.convert(SkillName, 'input'),
          },
        ]
      : [];
  return [...path, ...query, ...creating];
}

function content(c: Content | readonly Content[], components: SchemaComponents): JsonSchema {
  const list = (Array.isArray(c) ? c : [c]) as Content[];
  return Object.fromEntries(
    list.map((one) =>
      one instanceof z.ZodType
        ? ['application/json', { schema: components.convert(one, 'output') }]
        : [one.mediaType, { schema: {} }],
    ),
  );
}

function describe(c: Content | readonly Content[]): string {
  const list = (Array.isArray(c) ? c : [c]) as Content[];
  return list.map((one) => (one instanceof z.ZodType ? 'JSON' : one.description)).join('; or ');
}

function operation(op: Operation, components: SchemaComponents): JsonSchema {
  const responses: JsonSchema = Object.fromEntries(
    Object.entries(op.responses).map(([status, c]) => [
      status,
      { description: describe(c), content: content(c, components) },
    ]),
  );
  const errorBody = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };
  for (const [status, description] of Object.entries(op.errors ?? {}))
    responses[status] = { description, content: errorBody };
  responses.default = {
    description: 'Every 4xx/5xx: the API error format (a 503 while a service or broker is away carries Retry-After)',
    headers: {
      'Retry-After': {
        description: 'On 503: seconds to wait before retrying',
        schema: { type: 'integer', minimum: 1 },
      },
    },
    content: errorBody,
  };
  const params = parameters(op, components);
  return {
    operationId: `${op.method.toLowerCase()}${openApiPath(op.path)
      .replace(/[{}]/g, '')
      .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: !op.body.safeParse(undefined).success,
            content: { 'application/json': { schema: components.convert(op.body, 'input') } },
          },
        }
      : {}),
    responses,
    ...(op.open ? { security: [] } : {}),
  };
}

/** The API as an OpenAPI 3.1 document, generated from the operation table and the zod contracts. */
export function buildOpenApiDocument(operations: readonly Operation[] = OPERATIONS): JsonSchema {
  const components = new SchemaComponents();
  components.define('ErrorBody', ErrorBody, 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of operations)
    (paths[openApiPath(op.path)] ??= {})[op.method.toLowerCase()] = operation(op, components);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Alfred API',
      version: API_VERSION,
      description: 'Skills and memory for LLM agents. Choose the agent with X-Alfred-Agent (default alfred).',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'an ALFRED_API_KEYS key (required unless the API is bound to loopback without keys)',
        },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
    security: [{ bearer: [] }, { apiKey: [] }],
  };
}

let cached: JsonSchema | undefined;

/** Built once per process: the contracts do not change while it runs. */
export function openApiDocument(): JsonSchema {
  cached ??= buildOpenApiDocument();
  return cached;
}
