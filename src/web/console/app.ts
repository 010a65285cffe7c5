import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { Link, Route, Router, Switch } from "wouter-preact";
import { AdminPage } from "./admin.js";
import { CallPage } from "./call.js";
import { CallsPage } from "./calls.js";
import { useConsoleLocation } from "./location.js";
import { session } from "./session.js";
import { SignIn } from "./sign-in.js";
import { SimulatePage } from "./simulate.js";
import { ThreadPage } from "./thread.js";
import { ThreadsPage } from "./threads.js";

function Navigation({ onSignOut }: { onSignOut: () => void }) {
  return html`<header class="top">
    <a class="skip" href="#main">Skip to content</a>
    <nav aria-label="Console">
      <span class="brand">Parley</span>
      <${Link} href="/threads">Threads<//>
      <${Link} href="/calls">Calls<//>
      <${Link} href="/simulate">Simulations<//>
      <${Link} href="/admin">Admin<//>
      <button class="link" onClick=${onSignOut}>Sign out</button>
    </nav>
  </header>`;
}

/**
 * The console: sign-in, then the screens, addressed by the URL's hash (`#/threads/…?filters`) so that /console serves
 * them all and a filtered view is a link.
 */
export function App() {
  const [signedIn, setSignedIn] = useState(session.apiKey() !== null);
  if (!signedIn) return html`<${SignIn} onSignedIn=${() => setSignedIn(true)} />`;
  const signOut = () => {
    session.signOut();
    setSignedIn(false);
  };
  return html`
    <${Router} hook=${useConsoleLocation} searchHook=${useConsoleLocation.searchHook}>
      <${Navigation} onSignOut=${signOut} />
      <main id="main" tabindex="-1">
        <${Switch}>
          <${Route} path="/threads/:id">${(params: { id: string }) => html`<${ThreadPage} key=${params.id} threadId=${params.id} />`}<//>
          <${Route} path="/calls/:id">${(params: { id: string }) => html`<${CallPage} key=${params.id} callId=${params.id} />`}<//>
          <${Route} path="/calls"><${CallsPage} /><//>
          <${Route} path="/simulate"><${SimulatePage} /><//>
          <${Route} path="/admin"><${AdminPage} /><//>
          <${Route}><${ThreadsPage} /><//>
        <//>
      </main>
    <//>
  `;
}
