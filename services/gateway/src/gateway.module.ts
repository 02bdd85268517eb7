import 'reflect-metadata';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BUS, NatsBus, NatsKvStore, type Bus } from '#bus';
import { FileKvStore } from '#files';
import { CachedKvStore } from '#kv';
import { LOGGER, PinoNestLogger, type Logger } from '#logging';
import { credentialTtlMsOf, type GatewayConfig } from './config.js';
import { AgentFilesController } from './controllers/agent-files.controller.js';
import { AgentsController } from './controllers/agents.controller.js';
import { ChannelsController } from './controllers/channels.controller.js';
import { CheckpointsController } from './controllers/checkpoints.controller.js';
import { CapabilitiesController } from './controllers/capabilities.controller.js';
import { ExecutableSkillsController } from './controllers/executable-skills.controller.js';
import { JobsController } from './controllers/jobs.controller.js';
import { MemoriesController } from './controllers/memories.controller.js';
import { RecallController } from './controllers/recall.controller.js';
import { RemediationsController } from './controllers/remediations.controller.js';
import { SessionsController } from './controllers/sessions.controller.js';
import { SkillsController } from './controllers/skills.controller.js';
import { HEALTH_TIMEOUT_MS, SystemController } from './controllers/system.controller.js';
import { TurnsController } from './controllers/turns.controller.js';
import { UsageController } from './controllers/usage.controller.js';
import { AgentExistsGuard } from './http/agent-scope.js';
import { ErrorFilter } from './http/error.filter.js';
import { McpController } from './mcp/mcp.controller.js';
import { ObservabilityController } from './controllers/observability.controller.js';
import { installHttpMetrics } from './http/http-metrics.js';
import { RequestHistory } from './http/request-history.js';
import { installBodyLimit } from './http/body-limit.js';
import { acceptOnlyJson, installAuth, refuseNul } from './http/fastify-setup.js';
import { defaultConsoleDir, installConsole, isConsolePath } from './http/console-static.js';
import { ScopedCredentials } from './http/scoped-credential.js';
import {
  KvCredentialRevocations,
  memoryRevocations,
  type CredentialRevocations,
} from './http/credential-revocations.js';
import { CredentialHandlers } from './handlers/credential.handlers.js';
import { IdempotencyInterceptor } from './http/idempotency.interceptor.js';
import {
  IDEMPOTENCY_TTL_MS,
  KV_BUDGET_MS,
  KvIdempotencyStore,
  type IdempotencyStore,
} from './http/idempotency.store.js';
import { AGENT_DIRECTORY, RegistryAgentDirectory, type AgentDirectory } from './http/agent-directory.js';
import { AGENT_REGISTRY_BUCKET, agentRegistryDir, KvAgentStore } from '#agent-registry';

/** Idempotency-Key answers: in a KV bucket every gateway instance shares over NATS; in the process when embedded. */
export function idempotencyStore(bus: Bus, logger: Logger): IdempotencyStore {
  if (!(bus instanceof NatsBus)) return KvIdempotencyStore.inMemory();
  const options = { ttlMs: IDEMPOTENCY_TTL_MS, replicas: bus.replicas, timeoutMs: KV_BUDGET_MS };
  const kv = new NatsKvStore(bus.nc, bus.stream('ALFRED_IDEMPOTENCY'), options);
  return new KvIdempotencyStore(
    kv,
    () => bus.isConnected(),
    (err) => logger.warn({ err: String(err) }, 'gave up cleaning an Idempotency-Key after NATS stayed away'),
  );
}

/** Credential revocations: in a KV bucket every gateway instance checks over NATS; in the process when embedded. */
export function credentialRevocations(bus: Bus, ttlMs: number): CredentialRevocations {
  if (!(bus instanceof NatsBus)) return memoryRevocations(ttlMs);
  const options = { ttlMs, replicas: bus.replicas, timeoutMs: REGISTRY_READ_MS };
  const kv = new NatsKvStore(bus.nc, bus.stream(CREDENTIAL_REVOCATIONS_BUCKET), options);
  return new KvCredentialRevocations(kv, { connected: () => bus.isConnected() });
}

/** The bucket of credential revocations (before the bus's subject prefix). */
export const CREDENTIAL_REVOCATIONS_BUCKET = 'ALFRED_CREDENTIAL_REVOCATIONS';

/**
 * Agents and their policies, read from the registry agent-runtime writes: over NATS, the bucket (read per request: a
 * watch would lag behind a change made through another host); embedded, its files, cached in memory and kept current
 * by their in-process watch (a change is seen before the request that made it is answered).
 */
export async function agentDirectory(bus: Bus, dataDir: string): Promise<AgentDirectory> {
  if (!(bus instanceof NatsBus)) {
    const files = await CachedKvStore.open(new FileKvStore(agentRegistryDir(dataDir)));
    return new RegistryAgentDirectory(new KvAgentStore(files), () => true, 'the agent registry files');
  }
  const kv = new NatsKvStore(bus.nc, bus.stream(AGENT_REGISTRY_BUCKET), {
    replicas: bus.replicas,
    timeoutMs: REGISTRY_READ_MS,
  });
  const registry = new KvAgentStore(kv);
  return new RegistryAgentDirectory(registry, () => bus.isConnected());
}

/** How long a read of the agent registry may take before the request is a 503 (as for the Idempotency-Key bucket). */
const REGISTRY_READ_MS = 2_500;

interface GatewayDeps {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly credentials: ScopedCredentials;
  readonly healthTimeoutMs: number;
  readonly historyStepMs: number;
  readonly agents: AgentDirectory;
}

@Global()
@Module({})
export class GatewayModule {
  static forRoot(deps: GatewayDeps): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [
        SystemController,
        MemoriesController,
        CapabilitiesController,
        SessionsController,
        AgentFilesController,
        JobsController,
        SkillsController,
        ExecutableSkillsController,
        AgentsController,
        TurnsController,
        CheckpointsController,
        RemediationsController,
        RecallController,
        McpController,
        ObservabilityController,
        ChannelsController,
        UsageController,
      ],
      providers: [
        { provide: BUS, useValue: deps.bus },
        { provide: LOGGER, useValue: deps.logger },
        { provide: ScopedCredentials, useValue: deps.credentials },
        { provide: HEALTH_TIMEOUT_MS, useValue: deps.healthTimeoutMs },
        { provide: RequestHistory, useValue: new RequestHistory(deps.historyStepMs) },
        { provide: AGENT_DIRECTORY, useValue: deps.agents },
        { provide: 'AGENT_DIRECTORY_CLOSER', useFactory: () => ({ onApplicationShutdown: () => deps.agents.close() }) },
        CredentialHandlers,
      ],
    };
  }
}

export interface GatewayRoute {
  readonly method: string;
  readonly url: string;
}

const registered = new WeakMap<NestFastifyApplication, GatewayRoute[]>();

/** Every route the gateway registered (fastify patterns such as `/memories/:id`), for the endpoint list's check. */
export function registeredRoutes(app: NestFastifyApplication): readonly GatewayRoute[] {
  return registered.get(app) ?? [];
}

/** Builds the HTTP API on fastify; the caller decides when to listen. */
export async function createGatewayApp(
  config: GatewayConfig,
  deps: { bus: Bus; logger: Logger },
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.ALFRED_BODY_LIMIT_BYTES,
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const ttlMs = credentialTtlMsOf(config);
  const revocations = credentialRevocations(deps.bus, ttlMs);
  const credentials = new ScopedCredentials(config.ALFRED_CREDENTIAL_SECRET, ttlMs, revocations);
  const agents = await agentDirectory(deps.bus, config.ALFRED_DATA_DIR);
  const healthTimeoutMs = config.ALFRED_HEALTH_TIMEOUT_MS;
  const historyStepMs = config.ALFRED_METRICS_HISTORY_STEP_S * 1000;
  const module = GatewayModule.forRoot({ ...deps, credentials, agents, healthTimeoutMs, historyStepMs });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    logger: new PinoNestLogger(deps.logger),
    abortOnError: false,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  const routes: GatewayRoute[] = [];
  fastify.addHook('onRoute', (r) => {
    // The console's static files are pages, not API routes: they are neither listed nor documented.
    if (isConsolePath(r.url)) return;
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  registered.set(app, routes);
  installHttpMetrics(fastify);
  installBodyLimit(fastify, {
    limitBytes: config.ALFRED_BODY_LIMIT_BYTES,
    discardBytes: config.ALFRED_BODY_DISCARD_BYTES,
  });
  installAuth(fastify, config.ALFRED_API_KEYS, credentials);
  acceptOnlyJson(fastify);
  refuseNul(fastify);
  await installConsole(fastify, config.ALFRED_CONSOLE_DIR ?? defaultConsoleDir());
  app.useGlobalFilters(new ErrorFilter(deps.logger.child({ context: ErrorFilter.name })));
  app.useGlobalGuards(new AgentExistsGuard(agents));
  const idempotencyLogger = deps.logger.child({ context: IdempotencyInterceptor.name });
  app.useGlobalInterceptors(
    new IdempotencyInterceptor(idempotencyStore(deps.bus, idempotencyLogger), idempotencyLogger),
  );
  await app.init();
  return app;
}
