/** Which Telegram users may talk to which agent (from ALFRED_TELEGRAM_ALLOW). */
export class AccessList {
  constructor(
    private readonly allow: ReadonlyMap<string, ReadonlySet<number>>,
    private readonly defaultAgent: string,
  ) {}

  /** The agents this user may talk to, in configuration order; empty for a stranger. */
  agentsOf(userId: number): string[] {
    return [...this.allow].filter(([, ids]) => ids.has(userId)).map(([agent]) => agent);
  }

  may(userId: number, agent: string): boolean {
    return this.allow.get(agent)?.has(userId) ?? false;
  }

  /** The agent a new chat of this user starts with: the default one if allowed, else the first allowed. */
  firstAgentOf(userId: number): string | undefined {
    return this.may(userId, this.defaultAgent) ? this.defaultAgent : this.agentsOf(userId)[0];
  }
}
