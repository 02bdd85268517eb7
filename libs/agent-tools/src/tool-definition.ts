/** A tool as the model sees it (Anthropic tool shape), plus whether a person must confirm each call. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Record<string, unknown>;
  /** The agent runtime asks the user before running the call; the tool itself does not ask again. */
  readonly requiresConfirmation?: boolean;
}

/** What a call gives the model back: text (JSON for data), and whether it is an error. */
export interface ToolCallResult {
  readonly content: string;
  readonly isError: boolean;
  /** The structured answer, for callers that want more than the text. */
  readonly data?: unknown;
}
