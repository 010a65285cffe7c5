import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { ChatResponse } from "../../../packages/client/src/index.js";
import { apiClient, session } from "./session.js";
import { ErrorNote, Field, formValues } from "./ui.js";

/** What `POST /chat` with `simulate` adds to `extras` (decisions.md, "Simulation"). */
interface SimulationRun {
  id: string;
  thread_id: string | null;
  turns: { role: "user" | "assistant"; message: string; source: string }[];
  stop_reason: string;
  evaluation?: {
    verdict: "pass" | "fail";
    score: number;
    judge: string;
    criteria: { key: string; passed: boolean; score: number; reasoning: string }[];
  };
}

function simulationOf(response: ChatResponse): SimulationRun | undefined {
  return (response.extras as ChatResponse["extras"] & { simulation?: SimulationRun }).simulation;
}

/** Runs a simulated conversation against a project's agent and shows its turns and evaluation. */
/** The interface's default number of user turns, sent when the form leaves it empty. */
const defaultMaxTurns = 5;

export function SimulatePage() {
  const [run, setRun] = useState<SimulationRun>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget as HTMLFormElement);
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const project = values["project"] ?? session.project();
    setBusy(true);
    setError(undefined);
    setRun(undefined);
    try {
      const client = apiClient();
      const threadId = values["thread_id"] ?? (await client.threads.create({ project_name: project })).thread_id;
      const response = await client.chat.send({
        thread_id: threadId,
        message: values["message"] ?? "",
        service_config_name: project,
        simulate: {
          initial_messages: (values["initial_messages"] ?? "").split("\n").map((line) => line.trim()).filter(Boolean),
          max_turns: values["max_turns"] ? Number(values["max_turns"]) : defaultMaxTurns,
          ...(values["agent_type"] ? { agent_type: values["agent_type"] } : {}),
          ...(values["industry"] ? { industry: values["industry"] } : {}),
          ...(values["topic"] ? { topic: values["topic"] } : {}),
          ...(values["behavioural_prompt"] ? { behavioural_prompt: values["behavioural_prompt"] } : {}),
          create: form.get("create") === "on",
          evaluate: form.get("evaluate") === "on",
        },
      });
      setRun(simulationOf(response));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <section aria-labelledby="simulate-title">
      <h1 id="simulate-title">Simulations</h1>
      <form class="card grid-form" onSubmit=${submit}>
        <${Field} label="Project"><input name="project" defaultValue=${session.project()} required /><//>
        <${Field} label="Thread id" hint="Empty: a new thread is made for the run."><input name="thread_id" /><//>
        <${Field} label="First user message"><input name="message" required maxlength="32000" defaultValue="Hi, I have a question." /><//>
        <${Field} label="Scripted user turns" hint="One per line."><textarea name="initial_messages" rows="3"></textarea><//>
        <${Field} label="Maximum user turns"><input name="max_turns" type="number" min="1" max="50" defaultValue="3" /><//>
        <${Field} label="Agent type"><input name="agent_type" placeholder="customer support" /><//>
        <${Field} label="Industry"><input name="industry" placeholder="retail" /><//>
        <${Field} label="Topic"><input name="topic" placeholder="opening hours" /><//>
        <${Field} label="Behaviour of the simulated user"><textarea name="behavioural_prompt" rows="2"></textarea><//>
        <label class="check"><input type="checkbox" name="create" /> Store the conversation in a new SIMULATION thread</label>
        <label class="check"><input type="checkbox" name="evaluate" checked /> Evaluate the conversation</label>
        <button type="submit" disabled=${busy}>${busy ? "Running…" : "Run simulation"}</button>
      </form>
      <${ErrorNote} error=${error} />
      ${run
        ? html`<div aria-live="polite">
            <h2>Turns</h2>
            <p>Stopped: ${run.stop_reason}${run.thread_id ? html` · stored in <${Link} href=${`/threads/${run.thread_id}`}>thread ${run.thread_id}<//>` : " · dry run, nothing stored"}</p>
            <ol class="messages">
              ${run.turns.map((turn, index) => html`<li key=${index} class=${`message ${turn.role}`}><span class="meta">${turn.role} · ${turn.source}</span><span class="text">${turn.message}</span></li>`)}
            </ol>
            ${run.evaluation
              ? html`<h2>Evaluation</h2>
                  <p class=${`verdict ${run.evaluation.verdict}`}>${run.evaluation.verdict.toUpperCase()} · score ${run.evaluation.score.toFixed(2)} · judge: ${run.evaluation.judge}</p>
                  <div class="table-wrap"><table>
                    <thead><tr><th scope="col">Criterion</th><th scope="col">Passed</th><th scope="col">Score</th><th scope="col">Reasoning</th></tr></thead>
                    <tbody>${run.evaluation.criteria.map((criterion) => html`<tr key=${criterion.key}><td>${criterion.key}</td><td>${criterion.passed ? "yes" : "no"}</td><td>${criterion.score.toFixed(2)}</td><td>${criterion.reasoning}</td></tr>`)}</tbody>
                  </table></div>`
              : null}
          </div>`
        : null}
    </section>
  `;
}
