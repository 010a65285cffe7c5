import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { ProjectConfig } from "../../../packages/client/src/index.js";
import { adminClient, session } from "./session.js";
import { ErrorNote, Field, formValues } from "./ui.js";

/** What `GET /admin/projects/{id}` shows. */
interface ProjectView {
  id: string;
  organization_id: string;
  name: string;
  config_version_id: string;
  config: Record<string, unknown>;
  versions: { id: string; version: number; created_at: string }[];
}

interface Listed {
  id: string;
  name?: string;
}

/**
 * Reads a list endpoint of the admin interface that a server may not have yet (they are being added): the rows it
 * returns, or undefined when the server answers 404/405 for it.
 */
async function optionalList(path: string, field: string): Promise<Listed[] | undefined> {
  const response = await fetch(path, { headers: { authorization: `Bearer ${session.adminKey() ?? ""}` } });
  if (!response.ok) return undefined;
  const body: unknown = await response.json();
  const rows = Array.isArray(body) ? body : (body as Record<string, unknown>)[field];
  return Array.isArray(rows) ? rows.filter((row): row is Listed => typeof row === "object" && row !== null && typeof (row as Listed).id === "string") : undefined;
}

/**
 * The project view shows its configuration with every default filled in, some of which the input refuses (an empty
 * `base_url` is not a URL, a null `simulation.provider` is "the agent's own"), and `api_key_set`, which only reports:
 * both are left out of what is published, so that an edited view publishes as it reads.
 */
function withoutViewOnlyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutViewOnlyValues);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, item]) => item !== "" && item !== null && key !== "api_key_set")
      .map(([key, item]) => [key, withoutViewOnlyValues(item)]),
  );
}

/** Shows a secret that the server will never show again, with a way to copy it. */
function ShownOnce({ label, secret }: { label: string; secret: string }) {
  return html`<div class="shown-once" role="status">
    <p><strong>${label}</strong>: shown once. Copy it now; only its hash is stored.</p>
    <code data-testid="shown-once">${secret}</code>
    <button type="button" onClick=${() => void navigator.clipboard?.writeText(secret)}>Copy</button>
  </div>`;
}

function AdminKeyForm({ onSet }: { onSet: () => void }) {
  return html`<form class="card" onSubmit=${(event: Event) => {
    event.preventDefault();
    const key = formValues(event.currentTarget as HTMLFormElement)["admin_key"];
    if (key) {
      session.setAdminKey(key);
      onSet();
    }
  }}>
    <${Field} label="Admin key" hint="The server's ADMIN_API_KEY; kept in this tab's session storage only.">
      <input name="admin_key" type="password" autocomplete="off" required />
    <//>
    <button type="submit">Use admin key</button>
  </form>`;
}

/** The operator's screens: organizations, API keys (shown once), projects and their configuration versions. */
export function AdminPage() {
  const [hasKey, setHasKey] = useState(session.adminKey() !== null);
  const [organizations, setOrganizations] = useState<Listed[] | undefined | null>(null);
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const [project, setProject] = useState<ProjectView>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const [organizationId, setOrganizationId] = useState("");

  useEffect(() => {
    if (hasKey) optionalList("/admin/organizations", "organizations").then(setOrganizations, () => setOrganizations(undefined));
  }, [hasKey, secret]);

  if (!hasKey) return html`<section aria-labelledby="admin-title"><h1 id="admin-title">Admin</h1><${AdminKeyForm} onSet=${() => setHasKey(true)} /></section>`;

  const act = (work: (values: Record<string, string>, form: HTMLFormElement) => Promise<void>) => async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setNotice(undefined);
    const form = event.currentTarget as HTMLFormElement;
    try {
      await work(formValues(form), form);
    } catch (failure) {
      setError(failure);
    }
  };
  const openProject = async (projectId: string) => setProject((await adminClient().admin.getProject(projectId)) as ProjectView);
  const parseConfig = (text: string | undefined): ProjectConfig => withoutViewOnlyValues(JSON.parse(text ?? "{}")) as ProjectConfig;

  return html`
    <section aria-labelledby="admin-title" class="admin">
      <h1 id="admin-title">Admin</h1>
      <p><button class="link" onClick=${() => {
        session.setAdminKey(null);
        setHasKey(false);
      }}>Forget the admin key</button></p>
      <${ErrorNote} error=${error} />
      ${notice ? html`<p role="status" class="notice">${notice}</p>` : null}
      ${secret ? html`<${ShownOnce} label=${secret.label} secret=${secret.value} />` : null}

      <h2>Organizations</h2>
      ${organizations === null
        ? html`<p>Loading…</p>`
        : organizations === undefined
          ? html`<p class="hint">This server does not list organizations; create one below or enter its id.</p>`
          : html`<ul>${organizations.map((organization) => html`<li key=${organization.id}>${organization.name ?? ""} <code>${organization.id}</code></li>`)}</ul>`}
      <form class="card inline" onSubmit=${act(async (values, form) => {
        const created = await adminClient().admin.createOrganization(values["name"] ?? "");
        setSecret({ label: `API key of ${created.name} (${created.id})`, value: created.api_key });
        setOrganizationId(created.id);
        form.reset();
      })}>
        <${Field} label="New organization name"><input name="name" required maxlength="200" /><//>
        <button type="submit">Create organization</button>
      </form>

      <h2>API keys</h2>
      <form class="card inline" onSubmit=${act(async (values) => {
        const created = await adminClient().admin.createApiKey(values["organization_id"] ?? "");
        setSecret({ label: `New API key ${created.id}`, value: created.api_key });
      })}>
        <${Field} label="Organization id"><input key=${organizationId} name="organization_id" required defaultValue=${organizationId} /><//>
        <button type="submit">Create API key</button>
      </form>
      <form class="card inline" onSubmit=${act(async (values, form) => {
        await adminClient().admin.revokeApiKey(values["key_id"] ?? "");
        setNotice("API key revoked.");
        form.reset();
      })}>
        <${Field} label="API key id"><input name="key_id" required /><//>
        <button type="submit" class="danger">Revoke API key</button>
      </form>

      <h2>Projects</h2>
      <form class="card grid-form" onSubmit=${act(async (values) => {
        const created = await adminClient().admin.createProject(values["organization_id"] ?? "", values["name"] ?? "", parseConfig(values["config"]));
        await openProject(created.id);
      })}>
        <${Field} label="Organization id"><input key=${organizationId} name="organization_id" required defaultValue=${organizationId} /><//>
        <${Field} label="Project name"><input name="name" required maxlength="200" /><//>
        <${Field} label="Configuration (JSON)"><textarea name="config" rows="4" defaultValue='{"agent": {"provider": "builtin"}}'></textarea><//>
        <button type="submit">Create project</button>
      </form>
      <form class="card inline" onSubmit=${act(async (values) => openProject(values["project_id"] ?? ""))}>
        <${Field} label="Project id"><input name="project_id" required /><//>
        <button type="submit">Open project</button>
      </form>
      ${project
        ? html`<div class="card">
            <h3>${project.name} <code>${project.id}</code></h3>
            <p>Current configuration version <code>${project.config_version_id}</code></p>
            <table>
              <caption>Configuration versions</caption>
              <thead><tr><th scope="col">Version</th><th scope="col">Id</th><th scope="col">Published</th></tr></thead>
              <tbody>${project.versions.map((version) => html`<tr key=${version.id}><td>${version.version}${version.id === project.config_version_id ? " (current)" : ""}</td><td><code>${version.id}</code></td><td>${new Date(version.created_at).toLocaleString()}</td></tr>`)}</tbody>
            </table>
            <form onSubmit=${act(async (values) => {
              await adminClient().admin.publishConfig(project.id, parseConfig(values["config"]));
              await openProject(project.id);
              setNotice("New configuration version published; it is now the default.");
            })}>
              <${Field} label="Configuration (JSON; write-only secrets are not shown)">
                <textarea key=${project.config_version_id} name="config" rows="12" class="code" defaultValue=${JSON.stringify(project.config, null, 2)}></textarea>
              <//>
              <button type="submit">Publish as a new version</button>
            </form>
          </div>`
        : null}
    </section>
  `;
}
