// Sway's IPC socket (the i3 IPC framing: "i3-ipc", payload length, message type), for the questions asked
// often enough that a swaymsg process each time would cost more than the answer. Commands still go through
// swaymsg (wayland.ts), where one process per command is what the command costs anyway.
import { createConnection } from 'node:net';
import { machineEnv } from '../../../contract/machine-env.js';

const IPC_MAGIC = Buffer.from('i3-ipc');
const GET_TREE = 4;
const IPC_TIMEOUT_MS = 5000;

/**
 * Sway's tree (GET_TREE) straight from its IPC socket (SWAYSOCK), in the shape the caller reads: asked around
 * every action (native/shared/background.ts) and by every placement, so without a swaymsg process each time
 * (its start costs more than the answer, most of all on a busy machine).
 */
export function swayTree<Node>(): Promise<Node> {
  const path = machineEnv().SWAYSOCK;
  if (!path) return Promise.reject(new Error('SWAYSOCK is not set: no sway IPC socket to ask'));
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let got = Buffer.alloc(0);
    const done = (e: Error | null, tree?: Node) => {
      clearTimeout(timer);
      socket.destroy();
      if (e) reject(e);
      else resolve(tree!);
    };
    const timer = setTimeout(
      () => done(new Error(`sway's IPC gave no tree within ${IPC_TIMEOUT_MS} ms`)),
      IPC_TIMEOUT_MS,
    );
    socket.on('error', (e) => done(e));
    socket.on('connect', () => {
      const header = Buffer.alloc(14);
      IPC_MAGIC.copy(header, 0);
      header.writeUInt32LE(0, 6); // no payload
      header.writeUInt32LE(GET_TREE, 10);
      socket.write(header);
    });
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 14) return;
      const length = got.readUInt32LE(6);
      if (got.length < 14 + length) return;
      try {
        done(null, JSON.parse(got.subarray(14, 14 + length).toString('utf8')) as Node);
      } catch (e) {
        done(e as Error);
      }
    });
  });
}
