import { Module, type DynamicModule } from '@nestjs/common';
import { ServiceName } from '#contracts';
import { createAgentFileStore, type AgentFileStore } from '#agent-files';
import { BUS, NatsBus, NatsKvStore, type Bus } from '#bus';
import { SecretGuard } from '#content-safety';
import { AGENT_REGISTRY_BUCKET, agentRegistryDir, KvAgentStore, type AgentStore } from '#agent-registry';
import { FileKvStore } from '#files';
import { MemoryKvStore, moveEarlierData } from '#kv';
import { RedisKvStore } from '#redis';
import { createLlmClient, type LlmClient } from '#llm';
import { LOGGER, type Logger } from '#logging';
import { Metrics } from '#metrics';
import { announceOsSandbox, BashSandbox, DiskQuota } from '#sandbox';
import { drainWindowMs, SERVICE_CONTEXT, type ServiceContext, type ServiceDefinition } from '#runtime';
import { createSessionStore, type SessionStore } from '#sessions';
import { AgentFileEdits } from './agents/agent-file-edits.js';
import { AgentService } from './agents/agent.service.js';
import { moveFileAgents } from './agents/file-agents.migration.js';
import { moveRedisAgents } from './agents/redis-agents.migration.js';
import {
  agentRuntimeEnvSchema,
  apiUrlOf,
  loadAgentRuntimeConfig,
  workspaceQuotaOf,
  workspacesDirOf,
  type AgentRuntimeConfig,
} from './config.js';
import { AGENT_FILE_STORE, AgentFileHandlers } from './handlers/agent-file.handlers.js';
import { AgentHandlers } from './handlers/agent.handlers.js';
import { SESSION_STORE, SessionHandlers } from './handlers/session.handlers.js';
import { TurnHandlers } from './handlers/turn.handlers.js';
import { UsageHandlers, WORKSPACE_QUOTA, WORKSPACES_DIR } from './handlers/usage.handlers.js';
import { ExecutableSkillToolProvider } from './tools/executable-skill.provider.js';
import type { ToolProvider } from './tools/tool.types.js';
import { TurnCoordinator } from './turns/turn-coordinator.js';
import { TurnRunner } from './turns/turn-runner.js';
import { KvTurnStateStore, TURN_STATE_TTL_MS, type TurnStateStore } from './turns/turn-state.store.js';

const AGENT_STORE = Symbol('AGENT_STORE');
const TURN_STATE = Symbol('TURN_STATE');
const LLM = Symbol('LLM');
/** Tools beyond the core ones (executable skills plug in here). */
export const TOOL_PROVIDERS = Symbol('TOOL_PROVIDERS');

const closer = (token: symbol) => ({
  provide: `${String(token)}_CLOSER`,
  inject: [token],
  useFactory: (store: { close(): Promise<void> }) => ({ onApplicationShutdown: () => store.close() }),
});

/**
 * Where agents live: distributed, the registry bucket every gateway also reads (agents an earlier version kept in
 * Redis are moved there first); embedded, files under the data dir (moved from an earlier version's layout first).
 */
async function agentStore(config: AgentRuntimeConfig, bus: Bus, logger: Logger): Promise<AgentStore> {
  if (!(bus instanceof NatsBus)) {
    const files = new KvAgentStore(new FileKvStore(agentRegistryDir(config.ALFRED_DATA_DIR)));
    await moveEarlierData(logger, 'agents', () => moveFileAgents(config.ALFRED_DATA_DIR, files));
    return files;
  }
  const registry = new KvAgentStore(
    new NatsKvStore(bus.nc, bus.stream(AGENT_REGISTRY_BUCKET), { replicas: bus.replicas }),
  );
  if (config.REDIS_URL) {
    try {
      const moved = await moveRedisAgents(config.REDIS_URL, config.ALFRED_REDIS_PREFIX, registry);
      if (moved > 0) logger.info({ moved }, 'agents moved from Redis into the shared agent registry');
    } catch (err) {
      const note = 'agents kept in Redis by an earlier version could not be moved yet; the next start tries again';
      logger.warn({ err: String(err) }, note);
    }
  }
  return registry;
}

/**
 * The agent-runtime service: sessions, agent files, named agents and the agent loop, any instance serving any of them.
 */
@Module({})
export class AgentRuntimeModule {
  static forRoot(config: AgentRuntimeConfig, toolProviders: readonly ToolProvider[] = []): DynamicModule {
    const workspacesDir = workspacesDirOf(config);
    const quota = new DiskQuota(workspaceQuotaOf(config));
    return {
      module: AgentRuntimeModule,
      providers: [
        {
          provide: SESSION_STORE,
          inject: [LOGGER],
          useFactory: (logger: Logger) => createSessionStore(config, logger),
        },
        {
          provide: AGENT_FILE_STORE,
          inject: [LOGGER],
          useFactory: (logger: Logger) => createAgentFileStore(config, logger),
        },
        {
          provide: AGENT_STORE,
          inject: [BUS, LOGGER],
          useFactory: (bus: Bus, logger: Logger): Promise<AgentStore> => agentStore(config, bus, logger),
        },
        {
          provide: TURN_STATE,
          useFactory: (): TurnStateStore => {
            const options = { keyPrefix: config.ALFRED_REDIS_PREFIX, ttlMs: TURN_STATE_TTL_MS };
            const kv = config.REDIS_URL
              ? new RedisKvStore(config.REDIS_URL, 'turn-state', options)
              : new MemoryKvStore(options);
            return new KvTurnStateStore(kv);
          },
        },
        closer(SESSION_STORE),
        closer(AGENT_FILE_STORE),
        closer(AGENT_STORE),
        closer(TURN_STATE),
        { provide: LLM, useFactory: () => createLlmClient(config) },
        {
          provide: TOOL_PROVIDERS,
          inject: [BUS, LOGGER],
          useFactory: (bus: Bus, logger: Logger): ToolProvider[] => [
            new ExecutableSkillToolProvider(
              bus,
              logger.child({ context: 'ExecutableSkillTools' }),
              config.ALFRED_SKILL_INDEX_TTL_MS,
            ),
            ...toolProviders,
          ],
        },
        {
          provide: AgentService,
          inject: [AGENT_STORE, SESSION_STORE, AGENT_FILE_STORE, BUS],
          useFactory: (agents: AgentStore, sessions: SessionStore, files: AgentFileStore, bus: Bus) =>
            new AgentService(agents, sessions, files, bus, workspacesDir),
        },
        {
          provide: TurnCoordinator,
          inject: [BUS, SESSION_STORE, TURN_STATE, LLM, AgentService, TOOL_PROVIDERS, LOGGER, SERVICE_CONTEXT],
          useFactory: (
            bus: Bus,
            sessions: SessionStore,
            turnState: TurnStateStore,
            llm: LlmClient,
            agents: AgentService,
            providers: ToolProvider[],
            logger: Logger,
            ctx: ServiceContext,
          ) => {
            const log = logger.child({ context: TurnCoordinator.name });
            const sandbox = new BashSandbox({
              mode: config.ALFRED_OS_SANDBOX,
              bwrapPath: config.ALFRED_BWRAP_PATH,
              folder: workspacesDir,
              hostPath: config.PATH,
              quota,
            });
            void announceOsSandbox(
              logger.child({ context: 'BashSandbox' }),
              "the agent's bash commands",
              config.ALFRED_OS_SANDBOX,
              config.ALFRED_BWRAP_PATH,
              workspacesDir,
            );
            const runner = new TurnRunner(
              { bus, sessions, agents, llm, turnState, providers, logger: log },
              {
                maxToolRounds: config.ALFRED_MAX_TOOL_ROUNDS,
                maxOutputTokens: config.ALFRED_MAX_OUTPUT_TOKENS,
                contextWindow: config.ALFRED_CONTEXT_WINDOW,
                compactThreshold: config.ALFRED_COMPACT_THRESHOLD,
                confirmTimeoutMs: config.ALFRED_CONFIRM_TIMEOUT_MS,
                memoryLimit: config.ALFRED_MEMORY_CONTEXT_LIMIT,
                skillIndexTtlMs: config.ALFRED_SKILL_INDEX_TTL_MS,
                workspacesDir,
                quota,
                apiUrl: apiUrlOf(config, ctx.apiUrl),
                bash: {
                  defaultTimeoutMs: config.ALFRED_BASH_TIMEOUT_MS,
                  maxOutputChars: config.ALFRED_TOOL_OUTPUT_MAX,
                  sandbox,
                },
              },
            );
            return new TurnCoordinator(
              bus,
              sessions,
              turnState,
              llm,
              runner,
              {
                worker: ctx.instance,
                leaseMs: config.ALFRED_TURN_LEASE_MS,
                heartbeatMs: config.ALFRED_TURN_HEARTBEAT_MS,
                deadlineMs: config.ALFRED_TURN_DEADLINE_MS,
                confirmTimeoutMs: config.ALFRED_CONFIRM_TIMEOUT_MS,
                maxConcurrentTurns: config.ALFRED_MAX_CONCURRENT_TURNS,
                maxTenantTurns:
                  config.ALFRED_MAX_TENANT_TURNS ?? Math.max(1, Math.ceil(config.ALFRED_MAX_CONCURRENT_TURNS / 2)),
                // Running turns may finish until the shutdown deadline, less what writing and closing need.
                drainMs: () => drainWindowMs(config.ALFRED_SHUTDOWN_DEADLINE_MS),
              },
              log,
            );
          },
        },
        {
          provide: AgentFileEdits,
          inject: [AGENT_FILE_STORE],
          useFactory: (files: AgentFileStore) =>
            new AgentFileEdits(files, new SecretGuard(config.ALFRED_SECRETS_REDACT_TENANTS)),
        },
        SessionHandlers,
        AgentFileHandlers,
        AgentHandlers,
        TurnHandlers,
        { provide: WORKSPACE_QUOTA, useValue: quota },
        {
          provide: 'WORKSPACE_USAGE_GAUGE',
          useFactory: () => {
            const untrack = Metrics.diskUsage.track({ area: 'workspace' }, () => quota.knownTotal());
            return { onApplicationShutdown: untrack };
          },
        },
        { provide: WORKSPACES_DIR, useValue: workspacesDir },
        UsageHandlers,
      ],
    };
  }
}

export const agentRuntimeService: ServiceDefinition<AgentRuntimeConfig> = {
  name: ServiceName.AgentRuntime,
  envSchema: agentRuntimeEnvSchema,
  loadConfig: loadAgentRuntimeConfig,
  module: (config) => AgentRuntimeModule.forRoot(config),
  info: (app) => {
    const llm = app.get<LlmClient>(LLM);
    return { model: { configured: llm.isConfigured, name: llm.model } };
  },
};
