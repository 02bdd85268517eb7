/**
 * Splits a stream's text at a run's end marker: the text before it belongs to the run, the marker is
 * dropped. A marker split across chunks is found because its possible beginning is held back.
 */
export class MarkerSplitter {
  private held = '';
  private found = false;

  constructor(private readonly marker: string) {}

  get seen(): boolean {
    return this.found;
  }

  /** Returns the text that belongs to the run; after the marker, nothing more does. */
  push(text: string): string {
    if (this.found) return '';
    const buffer = this.held + text;
    const at = buffer.indexOf(this.marker);
    if (at >= 0) {
      this.found = true;
      this.held = '';
      return buffer.slice(0, at);
    }
    const keep = Math.min(buffer.length, this.marker.length - 1);
    this.held = buffer.slice(buffer.length - keep);
    return buffer.slice(0, buffer.length - keep);
  }

  /** What is held back when the stream ends without a marker. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}
