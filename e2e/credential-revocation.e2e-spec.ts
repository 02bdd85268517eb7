import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import {
  describeOsSandbox,
  describeWithNats,
  describeWithRedis,
  pollUntil,
  testServers,
  type ScriptedBlock,
} from '#testing';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createGatewayApp } from '../services/gateway/src/gateway.module.js';
import { client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();
const logger = createLogger({ service: 'e2e', level: 'silent' });
const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * A turn's bash credential ends with the turn however the turn's client behaves, on every gateway. Two
 * gateways over NATS share the signing secret; the SSE client drops the stream as soon as it has the credential.
 */
describeNats('turn credentials revoked on every gateway (NATS + Redis, two gateways)', () => {
  describeRedis('with sessions in Redis', () => {
    describeOsSandbox('and the OS sandbox for bash', () => {
      let sys: AgentSystem;
      let second: { app: NestFastifyApplication; bus: NatsBus; url: string };

      beforeAll(async () => {
        sys = await startAgentSystem('nats', { ALFRED_CREDENTIAL_SECRET: 'e2e-credential-secret-0123456789abcdef' });
        const bus = await NatsBus.connect({
          url: testServers.natsUrl,
          name: 'second-gateway',
          subjectPrefix: sys.subjectPrefix,
          logger,
        });
        const app = await createGatewayApp(loadGatewayConfig(sys.env), { bus, logger });
        await app.listen({ host: '127.0.0.1', port: 0 });
        const address = app.getHttpServer().address() as { port: number };
        second = { app, bus, url: `http://127.0.0.1:${address.port}` };
      }, 60_000);
      afterAll(async () => {
        await second?.app.close();
        await second?.bus.close(2_000);
        await sys?.stop();
      });

      /** Starts a turn over SSE and drops the connection once the bash result with the credential has arrived. */
      async function credentialThenDisconnect(session: string): Promise<string> {
        const abort = new AbortController();
        const res = await fetch(`${sys.url}/sessions/${session}/turns`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ message: 'show your key' }),
          signal: abort.signal,
        });
        let seen = '';
        let found: RegExpExecArray | null = null;
        const decoder = new TextDecoder();
        // Leaving the loop cancels the body, and the abort closes the connection: the client is gone before `done`.
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          seen += decoder.decode(chunk, { stream: true });
          if ((found = /key=(alfred_sc\.[\w.-]+)/.exec(seen))) break;
        }
        abort.abort();
        if (!found) throw new Error(`the turn ended without showing its credential:\n${seen}`);
        expect(seen).not.toContain('event: done');
        return found[1]!;
      }

      it('should refuse the credential on both gateways once its turn ended, its client gone before done', async () => {
        const api = client(sys.url);
        const session = (await api.post('/sessions', {})).body.id as string;
        sys.model.script(
          { content: [tool('bash', { command: 'echo "key=$ALFRED_API_KEY"' })], stopReason: 'tool_use' },
          { content: [{ type: 'text', text: 'done, slowly' }], delayMs: 1_500 },
        );

        const credential = await credentialThenDisconnect(session);

        // Still its turn: accepted, through either gateway.
        expect((await client(second.url, bearer(credential)).get('/memories')).status).toBe(200);
        await pollUntil(
          async () =>
            JSON.stringify((await api.get(`/sessions/${session}`)).body.messages ?? []).includes('done, slowly'),
          20_000,
          'the turn to end',
        );
        await pollUntil(
          async () => (await client(second.url, bearer(credential)).get('/memories')).status === 401,
          5_000,
          'the credential refused on the second gateway',
        );
        expect((await client(sys.url, bearer(credential)).get('/memories')).status).toBe(401);
        expect(
          (await client(second.url, bearer(credential)).post('/memories', { content: 'after the turn' })).status,
        ).toBe(401);
      }, 60_000);

      it('should refuse the credential on both gateways as soon as its turn is cancelled', async () => {
        const api = client(sys.url);
        const session = (await api.post('/sessions', {})).body.id as string;
        sys.model.script(
          { content: [tool('bash', { command: 'echo "key=$ALFRED_API_KEY"' })], stopReason: 'tool_use' },
          { content: [{ type: 'text', text: 'never seen' }], delayMs: 10_000 },
        );
        const credential = await credentialThenDisconnect(session);
        expect((await client(second.url, bearer(credential)).get('/memories')).status).toBe(200);

        expect((await client(second.url).delete(`/sessions/${session}/turns/current`)).status).toBe(200);

        // Well before the model would have answered.
        await pollUntil(
          async () => (await client(second.url, bearer(credential)).get('/memories')).status === 401,
          5_000,
          'the credential refused after the cancel',
        );
        expect((await client(sys.url, bearer(credential)).get('/memories')).status).toBe(401);
      }, 60_000);

      it("should hold the agent's own bash to its policy on the REST API (read from the registry)", async () => {
        const api = client(sys.url);
        expect(
          (await api.post('/agents', { name: 'limited', policy: { skills: { allow: ['*'], deny: ['remember'] } } }))
            .status,
        ).toBe(201);
        const session = (await api.post('/sessions', {}, { 'x-alfred-agent': 'limited' })).body.id as string;
        const status = (path: string) =>
          `curl -s -o /dev/null -w "${path} %{http_code}\\n" -H "Authorization: Bearer $ALFRED_API_KEY" ` +
          `"$ALFRED_API_URL${path}"`;
        sys.model.script(
          {
            content: [tool('bash', { command: `${status('/skills/remember')}; ${status('/skills/recall')}` })],
            stopReason: 'tool_use',
          },
          { content: [{ type: 'text', text: 'checked' }] },
        );
        const { events } = await streamTurn(sys.url, session, 'check your skills');
        const output = String(named(events, 'tool_result')[0]?.content);
        expect(output).toContain('/skills/remember 403');
        expect(output).toContain('/skills/recall 200');
      }, 60_000);

      it("should refuse a running turn's credential on both gateways once its session is deleted", async () => {
        const api = client(sys.url);
        const session = (await api.post('/sessions', {})).body.id as string;
        sys.model.script(
          { content: [tool('bash', { command: 'echo "key=$ALFRED_API_KEY"' })], stopReason: 'tool_use' },
          { content: [{ type: 'text', text: 'still going' }], delayMs: 3_000 },
        );
        const credential = await credentialThenDisconnect(session);
        expect((await client(sys.url, bearer(credential)).get('/memories')).status).toBe(200);

        expect((await client(second.url).delete(`/sessions/${session}`)).status).toBe(200);

        expect((await client(sys.url, bearer(credential)).get('/memories')).status).toBe(401);
        expect((await client(second.url, bearer(credential)).get('/memories')).status).toBe(401);
      }, 60_000);
    });
  });
});
