/** A stdout/stderr stand-in that keeps what is written, for CLI tests. */
export class Capture {
  text = '';
  isTTY = false;
  write(s: string) {
    this.text += s;
    return true;
  }
}
