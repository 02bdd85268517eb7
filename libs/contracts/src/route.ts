import type { z } from 'zod';
import { requiresTenant } from './tenancy.js';

/** A request/reply operation on the bus: its subject and the schemas of both directions. */
export interface Route<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly service: ServiceName;
  readonly request: Req;
  readonly response: Res;
  /**
   * Properties every route has by construction (tenancy, limits, timeout): enforced by the bus adapters, not by
   * handlers.
   */
  readonly options: RouteOptions;
}

/**
 * Structural properties of a route, declared once in the route table. Routes are tenant-scoped unless declared
 * `global`; limits and timeouts fall back to the bus defaults when absent.
 */
export interface RouteOptions {
  /** True only for routes that act on no tenant's data (health, shared read-only catalogues). */
  readonly global?: boolean;
  /** Largest request payload (bytes, JSON-encoded) the route accepts; larger is PAYLOAD_TOO_LARGE before sending. */
  readonly maxRequestBytes?: number;
  /** Largest reply payload (bytes) the route may produce. */
  readonly maxReplyBytes?: number;
  /** Default time budget for the whole request when the caller gives no deadline. */
  readonly timeoutMs?: number;
}

/** A durable event: its subject (an entity id may follow as one more token) and its payload schema. */
export interface EventDef<P extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly stream: string;
  readonly payload: P;
}

/**
 * A non-durable fan-out subject (core NATS, nothing stored): every current listener gets each message.
 * For live progress (turn events) and control signals; a key may follow the subject as one more token.
 */
export interface TopicDef<P extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly payload: P;
}

export const ServiceName = {
  Gateway: 'gateway',
  Memory: 'memory',
  SkillRegistry: 'skill-registry',
  SkillRunner: 'skill-runner',
  AgentRuntime: 'agent-runtime',
  Compactor: 'compactor',
  Distiller: 'distiller',
  Learner: 'learner',
  Channels: 'channels',
} as const;
export type ServiceName = (typeof ServiceName)[keyof typeof ServiceName];

export function route<Req extends z.ZodType, Res extends z.ZodType>(
  service: ServiceName,
  verb: string,
  request: Req,
  response: Res,
  options: RouteOptions = {},
): Route<Req, Res> {
  const subject = `alfred.${service}.${verb}.v1`;
  // Tenancy is structural: a route that acts on tenant data must say whose in its request, or declare itself global.
  if (!options.global && !requiresTenant(request)) {
    throw new Error(
      `route ${subject} must require a tenant in its request (tenant, scope or caller) or be declared { global: true }`,
    );
  }
  return { subject, service, request, response, options };
}

export function event<P extends z.ZodType>(entity: string, pastTense: string, stream: string, payload: P): EventDef<P> {
  return { subject: `alfred.${entity}.${pastTense}.v1`, stream, payload };
}

export function topic<P extends z.ZodType>(service: ServiceName, name: string, payload: P): TopicDef<P> {
  return { subject: `alfred.${service}.${name}.v1`, payload };
}

export type TopicPayloadOf<T extends TopicDef> = z.output<T['payload']>;
export type RequestOf<R extends Route> = z.input<R['request']>;
export type ParsedRequestOf<R extends Route> = z.output<R['request']>;
export type ResponseOf<R extends Route> = z.output<R['response']>;
export type PayloadOf<E extends EventDef> = z.output<E['payload']>;
