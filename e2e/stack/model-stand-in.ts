import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transformFile } from '@swc/core';
import { pollUntil, type ScriptedReply } from '#testing';

const run = promisify(execFile);
const LOOPBACK = ['anthropic-loopback', 'anthropic-loopback-wire', 'anthropic-loopback-cache'];
const DIR = '/tmp/alfred-model-stand-in';
const REQUESTS = '/tmp/alfred-model-requests.json';
const PID = '/tmp/alfred-model.pid';

/** The entry the containers run: the loopback on a fixed port, its script, and what it received (for the test). */
const SERVE = `import { readFileSync, writeFileSync } from 'node:fs';
import { AnthropicLoopback } from './anthropic-loopback.js';
const [port, apiKey, script] = process.argv.slice(2);
const model = await AnthropicLoopback.start({ port: Number(port), apiKey });
writeFileSync('${PID}', String(process.pid));
model.script(...JSON.parse(readFileSync(script, 'utf8')));
let seen = -1;
setInterval(() => {
  if (model.requests.length === seen) return;
  seen = model.requests.length;
  writeFileSync('${REQUESTS}', JSON.stringify(model.messageRequests.map((r) => r.body)));
}, 100);
`;

/**
 * The Messages API stand-in of the compose stack: libs/testing's AnthropicLoopback, compiled here and started inside
 * each given container on that container's own loopback (127.0.0.1:port, where ANTHROPIC_BASE_URL points), answering
 * from `script`. The real SDK in agent-runtime drives it; no packet leaves the container for it.
 */
export class ModelStandIn {
  private constructor(
    private readonly docker: string,
    private readonly containers: readonly string[],
  ) {}

  static async start(
    docker: string,
    containers: readonly string[],
    port: number,
    apiKey: string,
    script: readonly ScriptedReply[],
  ): Promise<ModelStandIn> {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-model-'));
    try {
      const source = new URL('../../libs/testing/src/', import.meta.url).pathname;
      for (const name of LOOPBACK) {
        const { code } = await transformFile(join(source, `${name}.ts`), {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
          module: { type: 'es6' },
        });
        await writeFile(join(dir, `${name}.js`), code);
      }
      await writeFile(join(dir, 'serve.mjs'), SERVE);
      await writeFile(join(dir, 'script.json'), JSON.stringify(script));
      // mkdtemp made it 0700 and `docker cp` keeps modes: the `node` user in the container must read it.
      await chmod(dir, 0o755);
      for (const id of containers) {
        await run(docker, ['exec', '-u', 'root', id, 'rm', '-rf', DIR, REQUESTS, PID]);
        await run(docker, ['cp', dir, `${id}:${DIR}`]);
        const serve = ['node', `${DIR}/serve.mjs`, String(port), apiKey, `${DIR}/script.json`];
        await run(docker, ['exec', '-d', '-u', 'node', id, ...serve]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const standIn = new ModelStandIn(docker, containers);
    for (const id of containers) {
      // Unauthenticated, so a 401 in the API's error format: the stand-in is up.
      const probe = ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/`];
      await pollUntil(async () => (await standIn.exec(id, probe)) === '401', 20_000, `the model stand-in in ${id}`);
    }
    return standIn;
  }

  /** The Messages API requests every stand-in received, in each container's order. */
  async requests(): Promise<any[]> {
    const all = [];
    for (const id of this.containers) {
      const text = await this.exec(id, ['sh', '-c', `cat ${REQUESTS} 2>/dev/null || echo '[]'`]);
      all.push(...(JSON.parse(text) as any[]));
    }
    return all;
  }

  async stop(): Promise<void> {
    for (const id of this.containers) await this.exec(id, ['sh', '-c', `kill "$(cat ${PID})"`]).catch(() => undefined);
  }

  private async exec(id: string, command: string[]): Promise<string> {
    return (await run(this.docker, ['exec', '-u', 'node', id, ...command])).stdout.trim();
  }
}
