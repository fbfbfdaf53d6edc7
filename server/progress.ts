// How a long call is getting on, for the client that asked (MCP notifications/progress; see mcp/notify.ts).
// Tools report through their call context (`ctx.progress`); code deep below them (the browser launch) has
// no context and finds the call it runs for with currentProgress().
import { AsyncLocalStorage } from 'node:async_hooks';

/** Says how a call is getting on. Only there when the client asked (a progressToken in the request's _meta). */
export type Progress = (message: string) => void;

/** The same message is sent at most this often (a polling wait repeats it on every poll). */
export const SAME_MESSAGE_EVERY_MS = 1000;

const calls = new AsyncLocalStorage<Progress>();
export const runWithProgress = <T>(progress: Progress | undefined, work: () => Promise<T>): Promise<T> =>
  progress ? calls.run(progress, work) : work();
export const currentProgress = (): Progress | undefined => calls.getStore();

/** Reports `message` now, and again each second while `work` runs (with the seconds waited so far). */
export async function reportWhile<T>(progress: Progress | undefined, message: string, work: Promise<T>): Promise<T> {
  if (!progress) return work;
  progress(message);
  const started = Date.now();
  const timer = setInterval(
    () => progress(`${message} (${Math.round((Date.now() - started) / 1000)} s)`),
    SAME_MESSAGE_EVERY_MS,
  );
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
