import { cacheChannel } from "../../src/domain/cache/invalidation.js";
import type { Db, ListenerStateHandler } from "../../src/domain/shared/database.js";

/**
 * Runs a write made behind the apps' backs (straight SQL, as another instance would) and returns once the
 * notification of `tag` has been delivered on `db`. The apps of the test process share that database object and
 * subscribed first, so by then they have dropped what they cached under the tag.
 */
export async function afterNotified<T>(db: Db, tag: string, write: () => Promise<T>): Promise<T> {
  let heard!: () => void;
  const notified = new Promise<void>((resolve) => (heard = resolve));
  const unlisten = await db.listen(cacheChannel, (payload) => {
    if (payload === tag) heard();
  });
  try {
    const result = await write();
    await notified;
    return result;
  } finally {
    await unlisten();
  }
}

/** Not a backend pid that PostgreSQL gives out. */
const controlledSession = -1;

export interface ControlledListener {
  db: Db;
  /** Keeps notifications from the app until `deliver` (as a slow listener connection would). */
  hold(): void;
  deliver(): void;
  /** The listener connection drops: notifications are lost until `reconnect`. */
  drop(): void;
  reconnect(): void;
}

/**
 * The database as an app sees it, with its notifications under the test's control. Its listener session is one of its
 * own unless `innerSession`: then it is the inner database's, as another instance with its own connection would be.
 */
export function controlledListener(inner: Db, { innerSession = false } = {}): ControlledListener {
  const stateHandlers = new Set<ListenerStateHandler>();
  const held: (() => void)[] = [];
  let holding = false;
  let connected = true;
  const db: Db = {
    kind: inner.kind,
    query: (sql, params) => inner.query(sql, params),
    transaction: (work) => inner.transaction(work),
    queryCommittingLater: (sql, params) => inner.queryCommittingLater(sql, params),
    exec: (script) => inner.exec(script),
    notify: (notifications) => inner.notify(notifications),
    listen: (channel, handler) =>
      inner.listen(channel, (payload) => {
        if (!connected) return;
        if (holding) held.push(() => handler(payload));
        else handler(payload);
      }),
    get listening() {
      return connected && inner.listening;
    },
    onListenerState(handler) {
      stateHandlers.add(handler);
      return () => stateHandlers.delete(handler);
    },
    // By default a session of its own, so that only this app's acknowledgements (held with its notifications) count.
    get listenerSession() {
      if (!connected) return undefined;
      return innerSession ? inner.listenerSession : controlledSession;
    },
    listenerSessions: async () => {
      if (innerSession) return inner.listenerSessions();
      return connected ? [controlledSession] : [];
    },
    ping: () => inner.ping(),
    close: async () => undefined,
  };
  return {
    db,
    hold: () => {
      holding = true;
    },
    deliver: () => {
      holding = false;
      for (const handler of held.splice(0)) handler();
    },
    drop: () => {
      connected = false;
      held.length = 0;
      for (const handler of stateHandlers) handler(false);
    },
    reconnect: () => {
      connected = true;
      for (const handler of stateHandlers) handler(true);
    },
  };
}
