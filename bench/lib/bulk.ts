/**
 * Fills a thread with `count` messages in SQL, as Parley would have written them: contiguous seqs from 1,
 * conversations of 20 messages (all ended but the last, which stays active), the thread's counters up to date.
 * A rare word ("zygomorphic") is in one message of every 10,000, for a selective search. The trigram index of
 * `messages` is dropped for the load and rebuilt from its own definition (much faster than maintaining it row by
 * row, and with nothing left in its pending list), then the
 * tables are vacuumed and analyzed, so that the measurements that follow neither set hint bits on their first reads
 * nor run beside the autovacuum that a load this size sets off.
 */
export type Run = (sql: string, params?: unknown[]) => Promise<unknown[]>;

export const rareWord = "zygomorphic";
export const rareEvery = 10_000;
const perConversation = 20;

export async function fillThread(run: Run, threadId: string, projectId: string, count: number): Promise<void> {
  const conversations = Math.ceil(count / perConversation);
  const [index] = (await run("SELECT pg_get_indexdef('messages_content_trgm'::regclass) AS definition")) as { definition: string }[];
  if (!index) throw new Error("messages_content_trgm not found");
  await run("DROP INDEX messages_content_trgm");
  try {
    await run(
      `INSERT INTO conversations (thread_id, conversation_id, project_id, started_at, ended_at)
       SELECT $1, c, $2, now() - interval '30 days' + c * interval '1 minute',
              CASE WHEN c < $3 THEN now() - interval '30 days' + c * interval '1 minute' + interval '50 seconds' END
         FROM generate_series(1, $3::int) c`,
      [threadId, projectId, conversations],
    );
    await run(
      `INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras, created_at)
       SELECT $1 || '-' || lpad(g::text, 9, '0'), $1, g, (g - 1) / ${perConversation} + 1,
              CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
              (ARRAY['What are your opening hours on weekdays?', 'We are open Monday to Friday, 9 am to 5 pm.',
                     'How much does a standard consultation cost?', 'A standard consultation costs 40 dollars.',
                     'Can I book an appointment for tomorrow morning?', 'Tell me a day and time that suits you and I will book it.',
                     'Where is your office? Is there parking nearby?', 'Our office is at 1 Main Street, next to the station.'])[1 + (g - 1) % 8]
                || ' (' || g || ')' || CASE WHEN g % ${rareEvery} = ${rareEvery / 2} THEN ' ${rareWord}' ELSE '' END,
              CASE WHEN g % 2 = 1 THEN '{"user_type": "user"}'::jsonb ELSE '{"provider": "builtin"}'::jsonb END,
              now() - interval '30 days' + ((g - 1) / ${perConversation} + 1) * interval '1 minute' + ((g - 1) % ${perConversation}) * interval '2 seconds'
         FROM generate_series(1, $2::int) g`,
      [threadId, count],
    );
    await run("UPDATE threads SET last_message_seq = $2, last_conversation_id = $3, active_conversation_id = $3 WHERE id = $1", [threadId, count, conversations]);
  } finally {
    await run(index.definition);
  }
  await run("VACUUM ANALYZE messages");
  await run("VACUUM ANALYZE conversations");
  await run("VACUUM ANALYZE threads");
}
