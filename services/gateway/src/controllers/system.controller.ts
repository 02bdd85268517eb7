import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ErrorCode, healthRoute, ServiceName, type ApiInfo, type Health, type ModelStatus } from '#contracts';
import { AlfredError } from '#errors';
import { BUS, type Bus } from '#bus';
import type { z } from 'zod';
import type { FastifyReply } from 'fastify';
import { API_ENDPOINTS, API_VERSION } from '../api-info.js';
import { AgentNotScoped } from '../http/agent-scope.js';

/** Services whose answer decides readiness: without them the API cannot serve its core. */
const CORE_SERVICES: readonly ServiceName[] = [ServiceName.Memory];
/** Services a deployment may leave out (chat channels): without a responder they are `absent`, not a degradation. */
const OPTIONAL_SERVICES: readonly ServiceName[] = [ServiceName.Channels];
/** Which bus carries the requests, and the state of the broker behind it (none in-process). */
type BusReport = { bus: Bus['kind']; dependencies: { nats?: ReturnType<Bus['connectionState']> } };
/** How long a health probe waits for each service (`ALFRED_HEALTH_TIMEOUT_MS`). */
export const HEALTH_TIMEOUT_MS = Symbol('HEALTH_TIMEOUT_MS');

@AgentNotScoped()
@Controller()
export class SystemController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(HEALTH_TIMEOUT_MS) private readonly timeoutMs: number,
  ) {}

  @Get()
  info(): z.infer<typeof ApiInfo> {
    return { name: 'Alfred Internal API', version: API_VERSION, endpoints: [...API_ENDPOINTS] };
  }

  /** The seed's health answer, plus which services answered and whether agent turns have a model. */
  @Get('health')
  async health(
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Health & { services: Record<string, string>; model: ModelStatus } & BusReport> {
    const details: Record<string, Record<string, unknown>> = {};
    const services = await this.probeServices(allServices(), details);
    const coreDown = this.bus.connectionState() !== 'connected' || CORE_SERVICES.some((s) => services[s] !== 'up');
    const anyDown = Object.values(services).some((s) => s !== 'up' && s !== 'absent');
    if (coreDown) void reply.status(503);
    return {
      status: coreDown ? 'unhealthy' : anyDown ? 'degraded' : 'healthy',
      version: API_VERSION,
      timestamp: new Date().toISOString(),
      services,
      model: modelStatus(details[ServiceName.AgentRuntime]?.model),
      ...this.busReport(),
    };
  }

  @Get('health/live')
  live() {
    return { live: true };
  }

  @Get('health/ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const services = await this.probeServices(CORE_SERVICES);
    const ready = this.bus.connectionState() === 'connected' && Object.values(services).every((s) => s === 'up');
    if (!ready) void reply.status(503);
    return { ready, services, ...this.busReport() };
  }

  /** The bus this gateway really uses; a broker is listed as a dependency only where there is one (NATS). */
  private busReport(): BusReport {
    if (this.bus.kind === 'in-process') return { bus: 'in-process', dependencies: {} };
    return { bus: 'nats', dependencies: { nats: this.bus.connectionState() } };
  }

  private async probeServices(
    names: readonly ServiceName[] = allServices(),
    details: Record<string, Record<string, unknown>> = {},
  ): Promise<Record<string, string>> {
    const entries = await Promise.all(
      names.map(async (name) => {
        try {
          const h = await this.bus.request(healthRoute(name), {}, { timeoutMs: this.timeoutMs });
          if (h.details) details[name] = h.details;
          return [name, h.ready ? 'up' : 'not-ready'] as const;
        } catch (err) {
          const absent =
            OPTIONAL_SERVICES.includes(name) && err instanceof AlfredError && err.code === ErrorCode.ServiceUnavailable;
          return [name, absent ? 'absent' : 'down'] as const;
        }
      }),
    );
    return Object.fromEntries(entries);
  }
}

function modelStatus(reported: unknown): ModelStatus {
  const m = reported as { configured?: unknown; name?: unknown } | undefined;
  if (typeof m?.configured !== 'boolean') return { configured: null, hint: 'the agent runtime did not answer' };
  if (!m.configured)
    return {
      configured: false,
      hint: 'set ANTHROPIC_API_KEY for agent turns; capabilities use their deterministic fallbacks',
    };
  return { configured: true, ...(typeof m.name === 'string' ? { name: m.name } : {}) };
}

function allServices(): ServiceName[] {
  return Object.values(ServiceName).filter((s) => s !== ServiceName.Gateway);
}
