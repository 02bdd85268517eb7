import type { z } from 'zod';

/** A request/reply operation on the bus: its subject and the schemas of both directions. */
export interface Route<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly service: ServiceName;
  readonly request: Req;
  readonly response: Res;
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
} as const;
export type ServiceName = (typeof ServiceName)[keyof typeof ServiceName];

export function route<Req extends z.ZodType, Res extends z.ZodType>(
  service: ServiceName,
  verb: string,
  request: Req,
  response: Res,
): Route<Req, Res> {
  return { subject: `alfred.${service}.${verb}.v1`, service, request, response };
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
