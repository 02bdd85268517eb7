import { ChatGate } from './chat-gate.js';

describe(ChatGate.name, () => {
  it('should admit updates of one chat in call order, each once the one before lets it in', async () => {
    const gate = new ChatGate();
    const order: string[] = [];
    const first = await gate.admit('c');
    const admitted = (name: string) => (open: Awaited<ReturnType<typeof gate.admit>>) => {
      order.push(name);
      return open;
    };
    const second = gate.admit('c').then(admitted('second'));
    const other = gate.admit('d').then(admitted('other'));
    await other;
    expect(order).toEqual(['other']);
    first();
    (await second)();
    expect(order).toEqual(['other', 'second']);
    const third = await gate.admit('c');
    third();
  });
});
