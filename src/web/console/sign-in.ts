import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { apiClient, session } from "./session.js";
import { ErrorNote, Field } from "./ui.js";

/** Checks the key with one cheap request before keeping it. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const apiKey = new FormData(event.currentTarget as HTMLFormElement).get("api_key");
    if (typeof apiKey !== "string" || !apiKey.trim()) return;
    setBusy(true);
    setError(undefined);
    try {
      await apiClient(apiKey.trim()).threads.list({ limit: 1 });
      session.signIn(apiKey.trim());
      onSignedIn();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main id="main" class="sign-in">
      <h1>Parley console</h1>
      <form onSubmit=${submit} class="card">
        <${Field} label="API key" hint="Kept in this tab's session storage only; sent in the Authorization header.">
          <input name="api_key" type="password" autocomplete="off" required autofocus placeholder="sk_…" />
        <//>
        <button type="submit" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
        <${ErrorNote} error=${error} />
      </form>
    </main>
  `;
}
