/** The built-in agent most suites talk to: a greeting, a fallback and two knowledge entries. */
export const acmeAgent = {
  provider: "builtin",
  greeting: "Welcome to Acme!",
  fallback: "Sorry, I cannot help with that.",
  knowledge: [
    { question: "What are your opening hours?", answer: "We are open from 9 to 5 on weekdays." },
    { question: "Where is the office located?", answer: "Our office is at 1 Main Street." },
  ],
};

export const knowledgeConfig = { agent: acmeAgent, pricing: { message_usd: 0.002 } };
