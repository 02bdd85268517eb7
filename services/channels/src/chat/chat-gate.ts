/**
 * First come, first admitted, per chat: an update waits until every earlier update of its chat was let through
 * (not finished: a turn lets the next one in once it has started), so two quick messages keep their order.
 */
export class ChatGate {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Registers at once (the call order is the admission order); resolves with the function that lets the next one in.
   */
  admit(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let open!: () => void;
    const mine = new Promise<void>((resolve) => {
      open = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return previous.then(() => open);
  }
}
