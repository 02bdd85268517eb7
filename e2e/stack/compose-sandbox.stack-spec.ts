import type { ScriptedReply } from '#testing';
import { ModelStandIn } from './model-stand-in.js';
import { api, compose, containersOf, describeStack, docker, named, stack, streamTurn } from './stack-env.js';

/** A line of /proc/1/status (the service: the entrypoint execs it) in a container, read as the service's user. */
async function serviceStatus(id: string): Promise<Record<string, string>> {
  const { stdout } = await docker('exec', '-u', 'node', id, 'cat', '/proc/1/status');
  const pairs = stdout.split('\n').map((l) => l.split(':\t'));
  return Object.fromEntries(pairs.filter((p) => p.length === 2).map(([k, v]) => [k, v!.trim()]));
}

const BASH =
  'hostname; id -u; curl -sS --fail-with-body -X POST "$ALFRED_API_URL/memories" ' +
  '-H "Content-Type: application/json" -H "X-Alfred-Agent: $ALFRED_AGENT" ' +
  '-d \'{"content": "Written by bash inside a sandbox of the compose stack"}\'';

/**
 * The services that run untrusted code, as docker-compose.yml deploys them: no container is privileged, the two that
 * run bubblewrap hold no capability once started, and a skill and an agent's bash turn run inside their sandboxes.
 */
describeStack('sandboxes in the compose stack (no privileged container)', () => {
  it('should run no container privileged, and the sandboxed services as `node` with no capability left', async () => {
    const ids = (await compose('ps', '-q')).stdout.split('\n').filter(Boolean);
    type Inspected = Array<{ Name: string; HostConfig: { Privileged: boolean } }>;
    const inspected = JSON.parse((await docker('inspect', ...ids)).stdout) as Inspected;
    expect(inspected.filter((c) => c.HostConfig.Privileged).map((c) => c.Name)).toEqual([]);
    for (const service of ['skill-runner', 'agent-runtime']) {
      for (const id of await containersOf(service)) {
        const s = await serviceStatus(id);
        console.log(`${service}: Uid ${s.Uid} CapEff ${s.CapEff} CapBnd ${s.CapBnd} NoNewPrivs ${s.NoNewPrivs}`);
        expect(`${service} ${s.Uid} ${s.CapEff} ${s.CapBnd} ${s.NoNewPrivs} ${s.Seccomp}`).toBe(
          `${service} 1000\t1000\t1000\t1000 0000000000000000 0000000000000000 1 2`,
        );
      }
    }
  });

  it("should run an executable skill in the skill-runner's sandbox", async () => {
    const id = `sandboxed-${Date.now()}`;
    const code = 'export async function execute(args: { n: number }) { return { success: true, result: args.n + 1 }; }';
    const parameters = { n: { type: 'number', required: true } };
    const created = await api('POST', '/executable-skills', { id, description: 'Adds one', parameters, code });
    expect(created.status).toBe(201);
    // Both replicas: each starts its own sandboxes (ALFRED_OS_SANDBOX is `required`, so no sandbox means a 503).
    for (let n = 0; n < 4; n++) {
      const ran = await api('POST', `/executable-skills/${id}/execute`, { n });
      expect(ran.body).toMatchObject({ success: true, result: n + 1 });
    }
  }, 60_000);

  it("should run an agent's bash turn in agent-runtime's sandbox, the SDK calling the model stand-in", async () => {
    const script: ScriptedReply[] = [
      { content: [{ type: 'tool_use', name: 'bash', input: { command: BASH } }], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'Stored from the sandbox.' }] },
    ];
    const agents = await containersOf('agent-runtime');
    const model = await ModelStandIn.start(stack.docker, agents, stack.modelPort, stack.modelKey, script);
    try {
      const session = (await api('POST', '/sessions', {})).body.id as string;
      const { status, events, body } = await streamTurn(session, 'Remember that the sandbox works.');
      expect(`${status} ${JSON.stringify(body ?? null)}`).toBe('200 null');
      expect(named(events, 'done')[0]).toMatchObject({ status: 'completed' });
      const [result] = named(events, 'tool_result');
      // bubblewrap's hostname and unprivileged user inside the sandbox, then the skill's curl through the API relay.
      console.log(`agent bash turn, tool result from the sandbox:\n${result.content}`);
      expect(result).toMatchObject({ name: 'bash', is_error: false });
      expect(result.content).toMatch(/^sandbox\n65534\n[\s\S]*\[exit code 0\]/);
      expect(named(events, 'message')[0].text).toBe('Stored from the sandbox.');
      expect(await model.requests()).toHaveLength(2);
      const search = await api('GET', '/search?q=bash%20inside%20a%20sandbox&limit=5');
      const found = search.body.results as Array<{ content: string }>;
      expect(found.map((m) => m.content)).toContain('Written by bash inside a sandbox of the compose stack');
    } finally {
      await model.stop();
    }
  }, 120_000);
});
