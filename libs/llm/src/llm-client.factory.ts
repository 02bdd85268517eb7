import { LlmClient } from './llm-client.js';
import { modelNotConfigured } from './llm-error.mapper.js';

export interface LlmConfig {
  readonly ANTHROPIC_API_KEY?: string;
  readonly ANTHROPIC_BASE_URL?: string;
  readonly ALFRED_MODEL: string;
  readonly ALFRED_MODEL_TIMEOUT_MS: number;
  readonly ALFRED_MODEL_MAX_RETRIES: number;
  readonly ALFRED_REQUIRE_MODEL: boolean;
}

/** The LLM client a service's config describes (not configured without a key). */
export function createLlmClient(config: LlmConfig): LlmClient {
  return new LlmClient({
    apiKey: config.ANTHROPIC_API_KEY,
    baseUrl: config.ANTHROPIC_BASE_URL,
    model: config.ALFRED_MODEL,
    timeoutMs: config.ALFRED_MODEL_TIMEOUT_MS,
    maxRetries: config.ALFRED_MODEL_MAX_RETRIES,
  });
}

/**
 * Whether capability work uses the model or its deterministic fallback; with ALFRED_REQUIRE_MODEL and no key
 * it is a clear MODEL_NOT_CONFIGURED instead.
 */
export function modelOrFallback(client: LlmClient, requireModel: boolean): 'model' | 'fallback' {
  if (client.isConfigured) return 'model';
  if (requireModel) throw modelNotConfigured();
  return 'fallback';
}
