/**
 * What the built-in agent understands beyond its knowledge entries, by fixed rules: the thread's context fields
 * ("What is my name?"), the details it asked for in its last message (a day and a time, an email address, a phone
 * number, a name) when the user supplies them, and questions about what it is and can do. Everything here is
 * deterministic and offline.
 */

export type Slot = "day" | "time" | "email" | "phone" | "name";

const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

const dayPattern = new RegExp(
  `\\b(?:(?:next|this)\\s+)?(?:${WEEKDAYS.join("|")}|today|tomorrow)\\b|\\b(?:${MONTHS.join("|")})\\s+\\d{1,2}(?:st|nd|rd|th)?\\b|\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTHS.join("|")})\\b|\\b\\d{4}-\\d{2}-\\d{2}\\b`,
  "i",
);
const timePattern = /\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|(?:[01]?\d|2[0-3]):[0-5]\d|noon|midday|midnight|(?:in the )?(?:morning|afternoon|evening))\b/i;
const emailPattern = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const phonePattern = /\+?\d[\d\s().-]{6,}\d/;
const namePattern = /\b(?:[Mm]y name is|I am|I'm|[Cc]all me|[Tt]his is)\s+([A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)?)/u;

function tidyTime(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/\s*(a\.m\.|am)$/, " am")
    .replace(/\s*(p\.m\.|pm)$/, " pm");
}

function tidyDay(raw: string): string {
  return raw
    .split(/\s+/)
    .map((word) => (WEEKDAYS.includes(word.toLowerCase()) || MONTHS.includes(word.toLowerCase()) ? capitalize(word.toLowerCase()) : word.toLowerCase()))
    .join(" ");
}

/** The details a message gives, each as it will be read back. */
export function slotsIn(text: string): Partial<Record<Slot, string>> {
  const found: Partial<Record<Slot, string>> = {};
  const day = dayPattern.exec(text)?.[0];
  if (day) found.day = tidyDay(day);
  const time = timePattern.exec(text)?.[0];
  if (time) found.time = tidyTime(time);
  const email = emailPattern.exec(text)?.[0];
  if (email) found.email = email;
  const phone = email ? undefined : phonePattern.exec(text)?.[0];
  if (phone && !dayPattern.test(phone) && phone.replace(/\D/g, "").length >= 7) found.phone = phone.trim();
  const name = namePattern.exec(text)?.[1];
  if (name) found.name = name;
  return found;
}

/** The details an agent's message asks the user for: a question or an invitation ("tell me…") naming them. */
export function slotsAskedBy(text: string): Slot[] {
  const lower = text.toLowerCase();
  if (!/\?|\b(?:tell me|let me know|give me|send me|share|which|what)\b/.test(lower)) return [];
  const asked: Slot[] = [];
  if (/\b(?:day|date|when)\b/.test(lower)) asked.push("day");
  if (/\b(?:time|when|what hour)\b/.test(lower)) asked.push("time");
  if (/\be-?mail\b/.test(lower)) asked.push("email");
  if (/\b(?:phone|mobile|number to call)\b/.test(lower)) asked.push("phone");
  if (/\byour (?:full )?name\b/.test(lower)) asked.push("name");
  return asked;
}

const slotQuestions: Record<Slot, string> = {
  day: "Which day suits you?",
  time: "What time suits you?",
  email: "What is your email address?",
  phone: "What number can we reach you on?",
  name: "What is your name?",
};

function readBack(given: Partial<Record<Slot, string>>): string {
  const parts: string[] = [];
  if (given.day && given.time) parts.push(`${given.day} at ${given.time}`);
  else if (given.day) parts.push(given.day);
  else if (given.time) parts.push(given.time);
  if (given.name) parts.push(`the name ${given.name}`);
  if (given.email) parts.push(`the email address ${given.email}`);
  if (given.phone) parts.push(`the number ${given.phone}`);
  return parts.join(", ");
}

/**
 * The answer to a user who supplies details that were asked for: read them back, ask for what is still missing,
 * and, once complete, say plainly that the built-in agent records them in the conversation but cannot act on them.
 */
export function followUp(asked: readonly Slot[], given: Partial<Record<Slot, string>>): string | undefined {
  const supplied = asked.filter((slot) => given[slot] !== undefined);
  if (supplied.length === 0) return undefined;
  const relevant = Object.fromEntries(supplied.map((slot) => [slot, given[slot]])) as Partial<Record<Slot, string>>;
  const missing = asked.filter((slot) => given[slot] === undefined);
  if (missing.length > 0) return `Thanks, ${readBack(relevant)} noted. ${missing.map((slot) => slotQuestions[slot]).join(" ")}`;
  return (
    `Thank you: ${readBack(relevant)}, noted in this conversation. ` +
    "I'm the built-in offline agent, so I can't complete the booking or contact anyone myself; someone from the team will confirm."
  );
}

/** "order_id", "orderId" and "order-id" all read as "order id". */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
}

const aboutTheUser = /\b(?:my|me|i|am)\b/i;

/**
 * An answer from the thread's context when the user asks about one of its fields ("What is my name?", "Do you
 * know my plan?", "Who am I?"): fields with a plain value (text, number, true/false), matched by every word of
 * the field's name.
 */
export function contextAnswer(question: string, context: Readonly<Record<string, unknown>>): string | undefined {
  if (!aboutTheUser.test(question)) return undefined;
  const words = new Set(question.toLowerCase().split(/[^a-z0-9]+/));
  const asksWhoIAm = /\bwho am i\b/i.test(question);
  for (const [key, value] of Object.entries(context)) {
    if (!["string", "number", "boolean"].includes(typeof value) || String(value).trim() === "") continue;
    const name = keyWords(key);
    if (name.length === 0) continue;
    if (name.every((word) => words.has(word)) || (asksWhoIAm && name.join(" ") === "name")) {
      return `Your ${name.join(" ")} is ${String(value)}.`;
    }
  }
  return undefined;
}

const aboutTheAgent = /\b(?:who|what) are you\b|\bare you (?:a |an )?(?:bot|robot|human|real|person|ai)\b|\bwhat can you do\b|\bhow can you help\b/i;

/** An honest account of the agent when asked what it is or can do, naming the topics (questions) its knowledge covers. */
export function selfDescription(question: string, knowledge: readonly { question: string }[]): string | undefined {
  if (!aboutTheAgent.test(question)) return undefined;
  const topics = knowledge.slice(0, 5).map((entry) => entry.question);
  const covered = topics.length > 0 ? ` I can answer questions such as: ${topics.join(" ")}` : "";
  return (
    "I'm Parley's built-in agent: a simple offline program, not a person and not a language model. " +
    "I answer from this project's knowledge entries and the details of this conversation; I can't take actions such as bookings, payments or emails." +
    covered
  );
}

/** `{{key}}` in the agent's own texts, filled from the thread's context as its system prompt is. */
export function fillFromContext(text: string, context: Readonly<Record<string, unknown>>): string {
  return text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_match, key: string) => {
    const value = context[key];
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
