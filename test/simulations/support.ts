import type { Evaluation, SimulationTurn } from "../../src/domain/simulations/simulation.js";
import type { Harness, TestResponse } from "../support/harness.js";

/** A dental clinic's built-in agent: enough knowledge for a conversation that goes somewhere. */
export const clinicAgent = {
  provider: "builtin",
  system_prompt: "You are the front desk of Bright Smile Dental.",
  greeting: "Welcome to Bright Smile Dental! How can I help?",
  fallback: "Sorry, I don't have an answer to that yet.",
  knowledge: [
    { question: "How do I book a cleaning appointment?", answer: "You can book a cleaning online or by calling 555-0100; cleanings take 45 minutes." },
    { question: "How much does a cleaning cost?", answer: "A standard cleaning costs 90 dollars, and most insurance plans cover it." },
    { question: "Do you accept insurance?", answer: "We accept Delta Dental, Cigna and Aetna insurance plans." },
    { question: "What are your opening hours?", answer: "The clinic is open Monday to Friday from 8 am to 6 pm." },
    { question: "Can I cancel or reschedule an appointment?", answer: "Appointments can be cancelled or rescheduled free of charge up to 24 hours before." },
    { question: "Where is the clinic?", answer: "Bright Smile Dental is at 12 Harbour Road, next to the pharmacy." },
  ],
};

export const clinicConfig = { agent: clinicAgent, pricing: { message_usd: 0.01 } };

export interface SimulationBody {
  message: string;
  extras: {
    user_message_id: string | null;
    conversation_id: number | null;
    reply_message_id: string | null;
    simulation: { id: string; thread_id: string | null; turns: SimulationTurn[]; stop_reason: string; evaluation?: Evaluation };
  };
}

export function simulate(h: Harness, credential: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<TestResponse> {
  return h.request({ method: "POST", url: "/chat", headers: { authorization: credential, ...headers }, payload: { service_config_name: "support", ...payload } });
}

export async function historyOf(h: Harness, apiKey: string, threadId: string): Promise<{ role: string; message: string; extras: Record<string, unknown> }[]> {
  const response = await h.request({ method: "GET", url: `/threads/${threadId}/messages?limit=100`, headers: { authorization: apiKey } });
  return response.json<{ messages: { role: string; message: string; extras: Record<string, unknown> }[] }>().messages;
}

export async function usageOf(h: Harness, apiKey: string, threadId: string): Promise<{ billable_messages: number; billable_message_cost: number }> {
  const response = await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } });
  return response.json<{ usage: { billable_messages: number; billable_message_cost: number } }>().usage;
}
