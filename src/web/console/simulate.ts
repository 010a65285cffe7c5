import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { ChatResponse } from "../../../packages/client/src/index.js";
import { Label } from "./labels.js";
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

/** The interface's default number of user turns, sent when the form leaves it empty. */
const defaultMaxTurns = 5;

/** Runs a simulated conversation against a project's agent and shows its turns and evaluation. */
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
      const threadId = values["thread_id"] ?? (await client.threads.create({ project_name: project, type: "SIMULATION" })).thread_id;
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
      <form class="card sim-form" onSubmit=${submit}>
        <fieldset class="form-group">
          <legend>Agent under test</legend>
          <${Field} label="Project"><input name="project" defaultValue=${session.project()} required /><//>
          <${Field} label="Thread id" hint="Empty: a new simulation thread is made for the run."><input name="thread_id" placeholder="e.g. 0196…" /><//>
        </fieldset>
        <fieldset class="form-group">
          <legend>Conversation</legend>
          <${Field} label="First user message" hint="What the user opens with."><input name="message" required maxlength="32000" defaultValue="Hi, I have a question." /><//>
          <${Field} label="Maximum user turns" hint="Scripted turns count; 1 to 50."><input name="max_turns" type="number" min="1" max="50" defaultValue="3" /><//>
          <${Field} label="Scripted user turns" hint="Optional, one per line; the simulated user writes the rest." wide=${true}><textarea name="initial_messages" rows="3" placeholder="e.g. Do you deliver on Sundays?"></textarea><//>
        </fieldset>
        <fieldset class="form-group">
          <legend>Simulated user</legend>
          <${Field} label="Topic" hint="Optional: what the user wants. Empty: judged against the first message." wide=${true}><input name="topic" placeholder="e.g. opening hours" /><//>
          <${Field} label="Agent type" hint="Optional."><input name="agent_type" placeholder="e.g. customer support" /><//>
          <${Field} label="Industry" hint="Optional."><input name="industry" placeholder="e.g. retail" /><//>
          <${Field} label="Behaviour" hint="Optional." wide=${true}><textarea name="behavioural_prompt" rows="2" placeholder="e.g. impatient, asks short questions"></textarea><//>
        </fieldset>
        <div class="form-actions">
          <label class="check"><input type="checkbox" name="create" /> Store the conversation in a new SIMULATION thread</label>
          <label class="check"><input type="checkbox" name="evaluate" checked /> Evaluate the conversation</label>
          <button type="submit" disabled=${busy}>${busy ? "Running…" : "Run simulation"}</button>
        </div>
      </form>
      <${ErrorNote} error=${error} />
      ${run
        ? html`<div aria-live="polite">
            <h2>Turns</h2>
            <p data-testid="stop-reason">Stopped: <${Label} kind="stop_reason" value=${run.stop_reason} />${run.thread_id ? html` · stored in <${Link} href=${`/threads/${run.thread_id}`} title=${run.thread_id}>a simulation thread<//>` : " · dry run, nothing stored"}</p>
            <ol class="messages">
              ${run.turns.map((turn, index) => html`<li key=${index} class=${`message ${turn.role}`}>
                <span class="meta"><${Label} kind="role" value=${turn.role} />${turn.source === "agent" ? null : html` · <${Label} kind="turn_source" value=${turn.source} />`}</span>
                <span class="text">${turn.message}</span>
              </li>`)}
            </ol>
            ${run.evaluation
              ? html`<h2>Evaluation</h2>
                  <p class=${`verdict ${run.evaluation.verdict}`}>${run.evaluation.verdict.toUpperCase()} · score ${run.evaluation.score.toFixed(2)} · judge: ${run.evaluation.judge}</p>
                  <div class="table-wrap"><table>
                    <thead><tr><th scope="col">Criterion</th><th scope="col">Passed</th><th scope="col">Score</th><th scope="col">Reasoning</th></tr></thead>
                    <tbody>${run.evaluation.criteria.map((criterion) => html`<tr key=${criterion.key}><td><${Label} kind="criterion" value=${criterion.key} /></td><td>${criterion.passed ? "Yes" : "No"}</td><td>${criterion.score.toFixed(2)}</td><td>${criterion.reasoning}</td></tr>`)}</tbody>
                  </table></div>`
              : null}
          </div>`
        : null}
    </section>
  `;
}
