/** Something that holds a call's socket open and can close it. */
export interface Closable {
  close(code: number, reason: string): void;
}

/** The vendor sockets this instance serves, by Parley call id, so that a call that ends here closes its own. */
export class LiveSockets<T extends Closable> {
  private readonly open = new Map<string, Set<T>>();

  add(callId: string, session: T): () => void {
    let sessions = this.open.get(callId);
    if (!sessions) {
      sessions = new Set();
      this.open.set(callId, sessions);
    }
    sessions.add(session);
    return () => {
      sessions.delete(session);
      if (sessions.size === 0 && this.open.get(callId) === sessions) this.open.delete(callId);
    };
  }

  /** Closes the call's sockets, or every socket when no call is named (the server stops). */
  close(callId?: string): void {
    const targets = callId === undefined ? [...this.open.values()] : [this.open.get(callId) ?? new Set<T>()];
    for (const sessions of targets) for (const session of [...sessions]) session.close(callId === undefined ? 1001 : 1000, callId === undefined ? "server shutting down" : "call ended");
  }
}
