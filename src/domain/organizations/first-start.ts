import type { SettingsRepository } from "./organizations-repository.js";
import { ADMIN_KEY_HASH_SETTING } from "../access/credentials.js";
import type { OrganizationService } from "./organization-service.js";
import type { ProjectConfigInput } from "../projects/project-config.js";
import type { ProjectService } from "../projects/project-service.js";
import { hashCredential, newCredential } from "../access/secrets.js";

export interface FirstStartKeys {
  organizationId: string;
  apiKey: string;
  adminKey: string;
  projectName: string;
  projectId: string;
}

export const demoProjectConfig: ProjectConfigInput = {
  agent: {
    provider: "builtin",
    system_prompt: "You are Parley's demo assistant. The customer's name is {{name}}.",
    greeting: "Hello! I'm Parley's built-in demo agent. Ask me about opening hours, prices or how to book.",
    fallback: "I'm the built-in offline agent and only know what my project's knowledge entries say. Try asking about opening hours or prices.",
    knowledge: [
      { question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 am to 5 pm." },
      { question: "How much does it cost? What are your prices?", answer: "A standard consultation costs 40 dollars." },
      { question: "How do I book an appointment?", answer: "Tell me a day and time that suits you and I will book it." },
    ],
  },
  pricing: { message_usd: 0.002, voice_minute_usd: 0.05 },
  voice: {
    provider: "simulated",
    accounts: [{ id: "00000000-0000-4000-8000-000000000001", phone_numbers: ["+14155550100"] }],
    inbound: { enabled: true, greeting: "Hello, you have reached Parley's demo line. How can I help?" },
  },
};

/**
 * On an empty database without ADMIN_API_KEY: an organization with a demo project, its API key and an admin key,
 * returned once for printing. The settings row makes this happen once even when several instances start together.
 */
export async function runFirstStart(
  organizations: OrganizationService,
  projects: ProjectService,
  settings: SettingsRepository,
): Promise<FirstStartKeys | undefined> {
  if ((await organizations.count()) > 0) return undefined;
  const claim = newCredential("");
  if ((await settings.putIfAbsent("first_start_claim", claim)) !== claim) return undefined;
  const organization = await organizations.create("Demo organization");
  const projectName = "demo";
  const project = await projects.create(organization.id, projectName, demoProjectConfig);
  const adminKey = newCredential("adm_");
  await settings.putIfAbsent(ADMIN_KEY_HASH_SETTING, hashCredential(adminKey));
  return { organizationId: organization.id, apiKey: organization.api_key, adminKey, projectName, projectId: project.id };
}
