// The channel from the `screen` tool to one Control UI connection: the gateway registers how a
// ui.command reaches a connection (explicitly, once it runs); without a gateway nothing is delivered.
export type UiCommandDelivery = (connId: string, command: Record<string, unknown>) => boolean;

export class UiCommands {
  private delivery: UiCommandDelivery | null = null;

  /** The gateway's delivery; returns the function that takes it back (when the gateway closes). */
  register(delivery: UiCommandDelivery): () => void {
    if (this.delivery) throw new Error('a ui.command delivery is already registered (one gateway per process)');
    this.delivery = delivery;
    return () => {
      if (this.delivery === delivery) this.delivery = null;
    };
  }

  /** Delivers a command to one Control UI connection; false when it is gone or no gateway runs. */
  send(connId: string, command: Record<string, unknown>): boolean {
    return !!this.delivery?.(connId, command);
  }
}
