import { z } from 'zod';

/** Stable error codes that cross the bus and the HTTP API. */
export const ErrorCode = {
  BadRequest: 'BAD_REQUEST',
  InvalidJson: 'INVALID_JSON',
  ValidationFailed: 'VALIDATION_FAILED',
  InvalidContent: 'INVALID_CONTENT',
  InvalidTarget: 'INVALID_TARGET',
  InvalidObservation: 'INVALID_OBSERVATION',
  /** The content holds a credential (API key, private key, token, password in a URL): never stored. */
  SecretDetected: 'SECRET_DETECTED',
  Unauthorized: 'UNAUTHORIZED',
  Forbidden: 'FORBIDDEN',
  NotFound: 'NOT_FOUND',
  RouteNotFound: 'ROUTE_NOT_FOUND',
  MethodNotAllowed: 'METHOD_NOT_ALLOWED',
  Conflict: 'CONFLICT',
  PayloadTooLarge: 'PAYLOAD_TOO_LARGE',
  UnsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
  EmbedderMismatch: 'EMBEDDER_MISMATCH',
  RateLimited: 'RATE_LIMITED',
  ModelNotConfigured: 'MODEL_NOT_CONFIGURED',
  ModelError: 'MODEL_ERROR',
  ModelAuthFailed: 'MODEL_AUTH_FAILED',
  /** The model refused the request as longer than its context window ("prompt is too long"). */
  ContextTooLong: 'CONTEXT_TOO_LONG',
  ServiceUnavailable: 'SERVICE_UNAVAILABLE',
  ServiceTimeout: 'SERVICE_TIMEOUT',
  /** A service produced a reply larger than its route's limit (the bus carries at most that much). */
  ReplyTooLarge: 'REPLY_TOO_LARGE',
  Internal: 'INTERNAL_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP status of each error code: the single place where codes become statuses. */
export const errorStatus: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  VALIDATION_FAILED: 422,
  INVALID_CONTENT: 400,
  INVALID_TARGET: 400,
  INVALID_OBSERVATION: 422,
  SECRET_DETECTED: 422,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  EMBEDDER_MISMATCH: 409,
  RATE_LIMITED: 429,
  MODEL_NOT_CONFIGURED: 503,
  MODEL_ERROR: 502,
  MODEL_AUTH_FAILED: 502,
  CONTEXT_TOO_LONG: 413,
  SERVICE_UNAVAILABLE: 503,
  SERVICE_TIMEOUT: 504,
  REPLY_TOO_LARGE: 500,
  INTERNAL_ERROR: 500,
};

/** The error body of every 4xx/5xx answer and every failed bus reply. */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
