// A promise that rejects with no handler ends a Node process by default (exit status 1, its stack on
// stderr): one stray rejection anywhere (a read started ahead and never awaited, a callback of a socket)
// took every session's calls with it, each told only "Connection closed" (issue 42 item 3). The server
// logs it as the defect it is, with its stack, and goes on serving. An exception thrown out of an event
// still ends the process: the state it left half-changed cannot be trusted.

/** From now on, a rejection nobody handles is logged (by `write`) and the process goes on. */
export function containStrayRejections(write: (line: string) => void = (line) => process.stderr.write(line)): void {
  process.on('unhandledRejection', (reason) => {
    const detail = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    write(`verity: internal error: a promise rejected with no handler; the server goes on: ${detail}\n`);
  });
}
