import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executableSkillTools, MANAGEMENT_TOOLS, type ExecutableSkillTools } from '#agent-tools';
import { InProcessBus } from '#bus';
import { createLogger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { SANDBOX_MODE } from '#testing';
import { skillRegistryService } from '../services/skill-registry/src/skill-registry.module.js';
import { skillRunnerService } from '../services/skill-runner/src/skill-runner.module.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });
const caller = { tenant: 'default', agent: 'alfred' };
const GREET =
  `export async function execute(args: { name: string }) { return { success: true, result: ` +
  `'hello ' + args.name }; }`;

/** The agent-tools lib over an in-process bus with the real skill-registry and skill-runner behind it. */
describe('executableSkillTools', () => {
  let dir: string;
  let bus: InProcessBus;
  const hosted: HostedService[] = [];
  let tools: ExecutableSkillTools;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-agent-tools-'));
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger });
    const env = {
      ALFRED_DATA_DIR: dir,
      ALFRED_PROJECT_DIR: join(dir, 'project'),
      ALFRED_HOME_DIR: join(dir, 'home'),
      ALFRED_EMBEDDER: 'hash',
      ALFRED_SKILLS_WATCH: 'false',
      ALFRED_OS_SANDBOX: SANDBOX_MODE,
    };
    for (const def of [skillRegistryService, skillRunnerService] as const) {
      hosted.push(
        await hostService(def as never, def.loadConfig(env), { service: def.name, instance: def.name, bus, logger }),
      );
    }
    tools = executableSkillTools(bus);
  }, 60_000);
  afterAll(async () => {
    for (const h of hosted.reverse()) await h.stop();
    await bus.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('definitions', () => {
    it('should offer the management tools, with create, update and delete flagged for confirmation', async () => {
      const defs = await tools.definitions(caller.tenant);
      expect(defs.map((d) => d.name)).toEqual([
        'skill_create',
        'skill_update',
        'skill_delete',
        'skill_reload',
        'skill_list',
      ]);
      expect(defs.filter((d) => d.requiresConfirmation).map((d) => d.name)).toEqual([
        'skill_create',
        'skill_update',
        'skill_delete',
      ]);
    });

    it('should make every loaded executable skill a tool with its JSON schema, leaving invalid ones out', async () => {
      const created = await tools.call(
        'skill_create',
        {
          id: 'greet-user',
          description: 'Greets someone',
          parameters: { name: { type: 'string', required: true } },
          code: GREET,
        },
        caller,
      );
      expect(created).toMatchObject({
        isError: false,
        data: { id: 'greet-user', status: 'loaded', tool: 'skill_greet_user' },
      });
      await mkdir(join(dir, 'executable-skills', 'broken-one'), { recursive: true });
      await writeFile(join(dir, 'executable-skills', 'broken-one', 'skill.json'), '{');
      expect((await tools.call('skill_reload', {}, caller)).data).toMatchObject({ added: ['broken-one'], invalid: 1 });
      const defs = await tools.definitions(caller.tenant);
      expect(defs.map((d) => d.name)).not.toContain('skill_broken_one');
      expect(defs.find((d) => d.name === 'skill_greet_user')).toEqual({
        name: 'skill_greet_user',
        description: 'Greets someone',
        input_schema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
          additionalProperties: false,
        },
      });
    });

    it('should never let a skill shadow a management tool', async () => {
      await tools.call('skill_create', { id: 'list', description: 'Would be skill_list', code: GREET }, caller);
      const defs = await tools.definitions(caller.tenant);
      expect(defs.filter((d) => d.name === 'skill_list')).toEqual([MANAGEMENT_TOOLS.skill_list]);
    });
  });

  describe('call', () => {
    it('should run a skill tool and give back its result', async () => {
      const result = await tools.call('skill_greet_user', { name: 'Ada' }, caller);
      expect(result).toMatchObject({ isError: false, content: JSON.stringify({ success: true, result: 'hello Ada' }) });
    });

    it('should report invalid arguments with field details as an error result, running nothing', async () => {
      const result = await tools.call('skill_greet_user', { name: 42 }, caller);
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/VALIDATION_FAILED: .*name/);
    });

    it('should update, list, reload and delete through the management tools', async () => {
      const updated = await tools.call(
        'skill_update',
        { id: 'greet-user', code: GREET.replace("'hello '", "'hi '") },
        caller,
      );
      expect(updated.data).toMatchObject({ version: '1.0.1' });
      expect((await tools.call('skill_greet_user', { name: 'Bo' }, caller)).content).toBe(
        JSON.stringify({ success: true, result: 'hi Bo' }),
      );
      const listed = await tools.call('skill_list', {}, caller);
      expect(listed.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: 'greet-user', status: 'loaded', version: '1.0.1' })]),
      );
      expect((await tools.call('skill_reload', {}, caller)).data).toMatchObject({ loaded: 2, invalid: 1 });
      expect((await tools.call('skill_delete', { id: 'greet-user' }, caller)).data).toMatchObject({
        id: 'greet-user',
        deleted: true,
      });
      const gone = await tools.call('skill_greet_user', { name: 'Cy' }, caller);
      expect(gone).toMatchObject({ isError: true, content: expect.stringMatching(/^NOT_FOUND/) });
    });

    it('should refuse a create whose id exists and an unknown tool, as error results', async () => {
      expect(
        (await tools.call('skill_create', { id: 'list', description: 'again', code: GREET }, caller)).content,
      ).toMatch(/^CONFLICT/);
      expect(await tools.call('bash', {}, caller)).toMatchObject({ isError: true, content: 'unknown tool bash' });
    });
  });
});
