import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { ParleyError, ValidationError } from "../../../packages/client/src/index.js";

/** A failure in words: a 422's issues by location, else the server's detail. */
export function describeError(error: unknown): string {
  if (error instanceof ValidationError) return error.issues.map((issue) => `${issue.loc.join(" › ")}: ${issue.msg}`).join("\n");
  if (error instanceof ParleyError) return typeof error.detail === "string" ? `${error.detail} (HTTP ${error.status})` : `HTTP ${error.status}`;
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return html`<p class="error" role="alert">${describeError(error)}</p>`;
}

/** A labelled input; `wide` spans the whole row of a form group. */
export function Field({ label, children, hint, wide }: { label: string; children: ComponentChildren; hint?: string; wide?: boolean }) {
  return html`<label class=${wide ? "field wide" : "field"}><span>${label}</span>${children}${hint ? html`<small>${hint}</small>` : null}</label>`;
}

export const formatTime = (millis: number) => new Date(millis).toLocaleString();
export const formatDate = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "—");
export const usd = (value: number) => `$${value.toFixed(4)}`;

/** Reads a form's named inputs as strings (empty ones left out). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of new FormData(form)) if (typeof value === "string" && value !== "") values[key] = value;
  return values;
}
