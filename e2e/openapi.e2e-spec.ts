import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InProcessBus } from '#bus';
import { createLogger } from '#logging';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createGatewayApp, registeredRoutes } from '../services/gateway/src/gateway.module.js';
import { openApiPath } from '../services/gateway/src/openapi/openapi.document.js';
import { startSystem, type TestSystem } from './harness.js';
import { readmeCurlExamples, runCurl, withVariables } from './readme-examples.js';

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };
type Param = { name: string; in: 'path' | 'query'; required: boolean; schema: Record<string, unknown> };

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

/** Validates against a schema of the document (its $refs resolved against the document). */
function check(doc: Doc, schema: unknown, value: unknown): string[] {
  const validate = ajv.compile({ ...(schema as object), $defs: undefined, components: doc.components } as object);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** Every `$ref` of the document, with where it stands. */
function refs(node: unknown, at = '#'): Array<{ at: string; ref: string }> {
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string'
      ? [{ at, ref: value }]
      : refs(value, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}

/** Follows a local JSON pointer (`#/a/b~1c`) through the document. */
function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: any = doc;
  for (const part of ref
    .slice(2)
    .split('/')
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))) {
    node = node !== null && typeof node === 'object' && Object.hasOwn(node, part) ? node[part] : undefined;
  }
  return node;
}

/** A query value as the operation reads it: a number or boolean parameter coerces from the string. */
function coerce(value: string, schema: Record<string, unknown>): unknown {
  const types = [schema.type, ...((schema.anyOf as Array<{ type?: string }>) ?? []).map((s) => s.type)];
  if (types.includes('number') || types.includes('integer')) return Number(value);
  if (types.includes('boolean')) return value === 'true';
  return value;
}

/** The document's operation for a request, matching `{param}` segments; its path parameters' values. */
function findOperation(
  doc: Doc,
  method: string,
  path: string,
): { op: any; params: Record<string, string> } | undefined {
  for (const [template, ops] of Object.entries(doc.paths)) {
    const names: string[] = [];
    const re = new RegExp(
      `^${template.replace(/\{(\w+)\}/g, (_, n: string) => {
        names.push(n);
        return n === 'path' ? '(.+)' : '([^/]+)';
      })}$`,
    );
    const m = re.exec(path);
    if (m && ops[method.toLowerCase()])
      return {
        op: ops[method.toLowerCase()],
        params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])),
      };
  }
  return undefined;
}

/** Every problem of a README request against the document: unknown operation, bad parameters or body. */
function requestProblems(doc: Doc, method: string, url: URL, body: string | undefined): string[] {
  const found = findOperation(doc, method, url.pathname);
  if (!found) return [`no operation ${method} ${url.pathname}`];
  const problems: string[] = [];
  for (const p of (found.op.parameters ?? []) as Param[]) {
    const raw = p.in === 'path' ? found.params[p.name] : (url.searchParams.get(p.name) ?? undefined);
    if (raw === undefined) {
      if (p.required) problems.push(`missing ${p.in} parameter ${p.name}`);
      continue;
    }
    problems.push(...check(doc, p.schema, coerce(raw, p.schema)).map((e) => `${p.name}${e}`));
  }
  for (const name of url.searchParams.keys()) {
    if (!(found.op.parameters ?? []).some((p: Param) => p.in === 'query' && p.name === name))
      problems.push(`undocumented query parameter ${name}`);
  }
  if (body !== undefined) {
    const schema = found.op.requestBody?.content?.['application/json']?.schema;
    problems.push(
      ...(schema
        ? check(doc, schema, JSON.parse(body)).map((e) => `body${e}`)
        : ['a body the operation does not take']),
    );
  }
  return problems;
}

/** The OpenAPI document is generated from the contracts; these checks keep it equal to what the gateway serves. */
describe('GET /openapi.json', () => {
  let system: TestSystem;
  let doc: Doc;
  beforeAll(async () => {
    system = await startSystem('embedded');
    const res = await fetch(`${system.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
  }, 60_000);
  afterAll(() => system.stop());

  it('should pass the standard OpenAPI 3.1 validators, every $ref pointing at something', async () => {
    const found = refs(doc);
    expect(found.length).toBeGreaterThan(50);
    expect(found.filter(({ ref }) => resolvePointer(doc, ref) === undefined)).toEqual([]);
    const checked = await new Validator().validate(structuredClone(doc) as Record<string, unknown>);
    expect({ valid: checked.valid, errors: checked.errors }).toEqual({ valid: true, errors: undefined });
    // swagger-parser validates the document and then dereferences every $ref, failing on one it cannot resolve.
    await expect(SwaggerParser.validate(structuredClone(doc) as any)).resolves.toMatchObject({ openapi: '3.1.0' });
  });

  it('should be OpenAPI 3.1 whose every schema compiles as JSON Schema 2020-12', () => {
    expect((doc as any).openapi).toBe('3.1.0');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const schemas = [
          ...((op.parameters ?? []) as Param[]).map((p) => p.schema),
          op.requestBody?.content?.['application/json']?.schema,
          ...Object.values(op.responses).map((r: any) => r.content?.['application/json']?.schema),
        ].filter(Boolean);
        for (const s of schemas)
          expect(() => ajv.compile({ ...s, components: doc.components })).not.toThrow(`${method} ${path}`);
      }
    }
  });

  it('should document every route the gateway serves, and nothing else, with its schemas', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-openapi-'));
    const bus = new InProcessBus({ dataDir: dir });
    const app: NestFastifyApplication = await createGatewayApp(loadGatewayConfig({ ALFRED_DATA_DIR: dir }), {
      bus,
      logger: createLogger({ service: 'e2e', level: 'silent' }),
    });
    try {
      const served = registeredRoutes(app)
        .filter(
          (r) =>
            r.method !== 'OPTIONS' &&
            !(r.url === '/mcp' && !['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method)),
        )
        .map((r) => `${r.method} ${openApiPath(r.url)}`);
      const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
      );
      expect([...new Set(served)].sort()).toEqual(documented.sort());
    } finally {
      await app.close();
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    }
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const name of path.match(/\{(\w+)\}/g) ?? [])
          expect(`${where} ${op.parameters?.some((p: Param) => `{${p.name}}` === name)}`).toBe(`${where} true`);
        for (const [status, r] of Object.entries(op.responses) as Array<[string, any]>) {
          expect(`${where} ${status} ${Object.keys(r.content ?? {}).length > 0}`).toBe(`${where} ${status} true`);
        }
        if (['post', 'put', 'patch'].includes(method) && path !== '/mcp' && !/reload$/.test(path))
          expect(`${where} ${op.requestBody !== undefined}`).toBe(`${where} true`);
      }
    }
  }, 60_000);

  it("should accept every README curl example's request, and describe every answer it gets", async () => {
    const examples = readmeCurlExamples();
    expect(examples.length).toBeGreaterThan(15);
    const vars: Record<string, string> = { A: system.url };
    vars.ID = (
      await runCurl([
        'curl',
        '-X',
        'POST',
        `${system.url}/memories`,
        '-H',
        'Content-Type: application/json',
        '-d',
        '{"content":"for $ID"}',
      ])
    ).body.id;
    for (const example of examples) {
      const args = withVariables(example, vars);
      const url = new URL(args.find((a) => a.startsWith(system.url))!);
      const body = example.body === undefined ? undefined : args[args.indexOf('-d') + 1];
      expect(`${example.line}: ${requestProblems(doc, example.method, url, body).join('; ')}`).toBe(
        `${example.line}: `,
      );
      const res = await runCurl(args);
      if (example.assigns) vars[example.assigns] = res.body.id;
      const op = findOperation(doc, example.method, url.pathname)!.op;
      const schema = (op.responses[res.status] ?? op.responses.default).content['application/json'].schema;
      expect(`${example.line} -> ${res.status}: ${check(doc, schema, res.body).join('; ')}`).toBe(
        `${example.line} -> ${res.status}: `,
      );
    }
  }, 60_000);
});
